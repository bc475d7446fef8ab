(module
  (memory (export "memory") 1)
  ;; Compiled into vectors.ts (DOT_WASM) with wabt 1.0.39 (SIMD on by default): wat2wasm dot.wat.
  ;; scores[r] = dot(data[r], q) for rows r in [0, rows), each row `dims` int8 (dims a multiple
  ;; of 16) against an int16 query, in integers: i32x4.dot_i16x8_s multiplies 8 pairs and adds
  ;; them pairwise into 4 lanes, so 16 int8 of a row take two widenings and two dots (the float
  ;; version widened each to float32 first: four times the instructions). The caller quantizes
  ;; the query to at most ±16383 and multiplies each score by the row's and the query's scales;
  ;; a lane adds dims/4 products of at most 127 x 16383, far from overflowing for any dims an
  ;; embedder gives (3,072: 1.6e9 < 2^31), and the four lanes are added in float32.
  ;; Rows are scored four at a time, each 32 bytes of the query loaded once for the four (a
  ;; quarter less time than one row at a time on 10,000 rows of 384; the same integers); the
  ;; last rows one at a time. data, q and out are byte offsets into memory; rows are `dims` apart.
  (func $sum (param $acc v128) (result f32)
    (f32.add
      (f32.add (f32.convert_i32_s (i32x4.extract_lane 0 (local.get $acc))) (f32.convert_i32_s (i32x4.extract_lane 1 (local.get $acc))))
      (f32.add (f32.convert_i32_s (i32x4.extract_lane 2 (local.get $acc))) (f32.convert_i32_s (i32x4.extract_lane 3 (local.get $acc))))))
  (func (export "scoreAll") (param $data i32) (param $q i32) (param $dims i32) (param $rows i32) (param $out i32)
    (local $r i32) (local $o i32) (local $p i32) (local $qi i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $lo v128) (local $hi v128) (local $b v128)
    (local.set $p (local.get $data))
    ;; four rows at a time: each 32 bytes of the query loaded once for 4 x 16 int8
    (block $done4
      (loop $rows4
        (br_if $done4 (i32.gt_u (i32.add (local.get $r) (i32.const 4)) (local.get $rows)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (local.set $o (i32.const 0))
        (local.set $qi (local.get $q))
        (block $rowdone
          (loop $inner
            (br_if $rowdone (i32.ge_u (local.get $o) (local.get $dims)))
            (local.set $lo (v128.load (local.get $qi)))
            (local.set $hi (v128.load offset=16 (local.get $qi)))
            (local.set $b (v128.load (i32.add (local.get $p) (local.get $o))))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (local.get $lo))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (local.get $hi)))))
            (local.set $b (v128.load (i32.add (i32.add (local.get $p) (local.get $dims)) (local.get $o))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (local.get $lo))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (local.get $hi)))))
            (local.set $b (v128.load (i32.add (i32.add (local.get $p) (i32.shl (local.get $dims) (i32.const 1))) (local.get $o))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (local.get $lo))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (local.get $hi)))))
            (local.set $b (v128.load (i32.add (i32.add (local.get $p) (i32.mul (local.get $dims) (i32.const 3))) (local.get $o))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (local.get $lo))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (local.get $hi)))))
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (local.set $qi (i32.add (local.get $qi) (i32.const 32)))
            (br $inner)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $sum (local.get $a0)))
        (f32.store offset=4 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $sum (local.get $a1)))
        (f32.store offset=8 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $sum (local.get $a2)))
        (f32.store offset=12 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $sum (local.get $a3)))
        (local.set $p (i32.add (local.get $p) (i32.shl (local.get $dims) (i32.const 2))))
        (local.set $r (i32.add (local.get $r) (i32.const 4)))
        (br $rows4)))
    ;; the last rows one at a time
    (block $done
      (loop $rowloop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $o (i32.const 0))
        (local.set $qi (local.get $q))
        (block $rowdone1
          (loop $inner1
            (br_if $rowdone1 (i32.ge_u (local.get $o) (local.get $dims)))
            (local.set $b (v128.load (i32.add (local.get $p) (local.get $o))))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (v128.load (local.get $qi)))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (v128.load offset=16 (local.get $qi))))))
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (local.set $qi (i32.add (local.get $qi) (i32.const 32)))
            (br $inner1)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $sum (local.get $a0)))
        (local.set $p (i32.add (local.get $p) (local.get $dims)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rowloop)))))
