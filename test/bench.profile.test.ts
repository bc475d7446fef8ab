import { describe, expect, it } from 'bun:test'
import { sampleShares } from '../bench/profile'

// a profile of (root) > handle > Response, and (root) > flush > write: one sample a millisecond
const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 })
const profile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4] },
    { id: 2, callFrame: frame('handle', 'file:///x/server.ts'), children: [3] },
    { id: 3, callFrame: frame('Response') },
    { id: 4, callFrame: frame('flush', 'file:///x/log.ts'), children: [5] },
    { id: 5, callFrame: frame('write') },
  ],
  startTime: 1_000_000,
  // 4 samples of start-up in write, then 6 of load: Response, Response, handle, write, Response, handle
  samples: [5, 5, 5, 5, 3, 3, 2, 5, 3, 2],
  timeDeltas: Array(10).fill(1000),
}

describe('bench:profile counts the load window only (bench/profile.ts)', () => {
  it('counts each function once per sample, self and in the stack, within the window', () => {
    // the last 6 samples: from 6 ms before the end (exclusive of the 7th) to the end
    const { samples, self, total } = sampleShares(profile, 5500, 0)
    expect(samples).toBe(6)
    expect(self.get('`Response` native')).toBe(3)
    expect(self.get('`handle` file:///x/server.ts:1')).toBe(2)
    expect(self.get('`write` native')).toBe(1)
    expect(total.get('`handle` file:///x/server.ts:1')).toBe(5)
    expect(total.get('`(root)` native')).toBe(6)
  })

  it('leaves out what came after the window', () => {
    const { samples, self } = sampleShares(profile, 5500, 2500)
    expect(samples).toBe(3) // Response, Response, handle
    expect(self.get('`Response` native')).toBe(2)
    expect(self.get('`write` native')).toBeUndefined()
  })
})
