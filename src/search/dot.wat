(module
  (memory (export "memory") 1)
  ;; Compiled into vectors.ts (DOT_WASM) with wabt 1.0.39 (SIMD on by default): wat2wasm dot.wat.
  ;; scores[r] = dot(data[r], q) for rows r in [0, rows), each row `dims` int8 (dims a multiple
  ;; of 16) against a float32 query; the caller multiplies by each row's scale.
  ;; data, q and out are byte offsets into memory.
  (func (export "scoreAll") (param $data i32) (param $q i32) (param $dims i32) (param $rows i32) (param $out i32)
    (local $r i32) (local $i i32) (local $acc v128) (local $qend i32) (local $p i32) (local $b v128) (local $h v128)
    (local.set $qend (i32.add (local.get $q) (i32.shl (local.get $dims) (i32.const 2))))
    (local.set $p (local.get $data))
    (block $done
      (loop $rowloop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $acc (v128.const f32x4 0 0 0 0))
        (local.set $i (local.get $q))
        (block $rowdone
          (loop $inner
            (br_if $rowdone (i32.ge_u (local.get $i) (local.get $qend)))
            ;; 16 int8 of the row, widened to 4 x 4 float32, against 16 float32 of the query
            (local.set $b (v128.load (local.get $p)))
            (local.set $h (i16x8.extend_low_i8x16_s (local.get $b)))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $h))) (v128.load (local.get $i)))))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $h))) (v128.load offset=16 (local.get $i)))))
            (local.set $h (i16x8.extend_high_i8x16_s (local.get $b)))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $h))) (v128.load offset=32 (local.get $i)))))
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $h))) (v128.load offset=48 (local.get $i)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $i (i32.add (local.get $i) (i32.const 64)))
            (br $inner)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
            (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rowloop)))))
