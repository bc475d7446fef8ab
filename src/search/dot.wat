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
  ;; data, q and out are byte offsets into memory.
  (func (export "scoreAll") (param $data i32) (param $q i32) (param $dims i32) (param $rows i32) (param $out i32)
    (local $r i32) (local $i i32) (local $acc v128) (local $qend i32) (local $p i32) (local $b v128)
    (local.set $qend (i32.add (local.get $q) (i32.shl (local.get $dims) (i32.const 1))))
    (local.set $p (local.get $data))
    (block $done
      (loop $rowloop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $i (local.get $q))
        (block $rowdone
          (loop $inner
            (br_if $rowdone (i32.ge_u (local.get $i) (local.get $qend)))
            ;; 16 int8 of the row, widened to 2 x 8 int16, against 16 int16 of the query
            (local.set $b (v128.load (local.get $p)))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $b)) (v128.load (local.get $i)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $b)) (v128.load offset=16 (local.get $i)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $i (i32.add (local.get $i) (i32.const 32)))
            (br $inner)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.add
            (f32.add (f32.convert_i32_s (i32x4.extract_lane 0 (local.get $acc))) (f32.convert_i32_s (i32x4.extract_lane 1 (local.get $acc))))
            (f32.add (f32.convert_i32_s (i32x4.extract_lane 2 (local.get $acc))) (f32.convert_i32_s (i32x4.extract_lane 3 (local.get $acc))))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rowloop)))))
