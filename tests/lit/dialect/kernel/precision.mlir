// A linear's precision becomes its kernel's (absent, like "f32", for f32,
// so that f32 kernels read as before), and tmk-dedup never shares a kernel
// between GEMMs of different precision: they are different code.
// RUN: tmc-opt %s --tm-lower-to-kernels | FileCheck %s --check-prefix=LOWER
// RUN: tmc-opt %s --tm-lower-to-kernels --tmk-dedup | FileCheck %s --check-prefix=DEDUP

// LOWER: tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, precision = "bf16", width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_0 linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_1 linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_2 linear {activation = "none", in_width = 8 : i64, precision = "bf16", width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_3 linear {activation = "none", in_width = 8 : i64, precision = "int8", width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_4 linear {activation = "none", in_width = 8 : i64, precision = "int8", width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_5 linear {activation = "none", in_width = 8 : i64, precision = "q4", width = 8 : i64}
// LOWER-NEXT: tmk.kernel @linear_6 linear {activation = "none", in_width = 8 : i64, precision = "q4", width = 8 : i64}

// Eight calls, four kernels: the bf16 pair shares one, the f32 pair (one of
// them "f32" written out) another, the int8 pair the third, the q4 pair the
// fourth.
// DEDUP: tmk.kernel @[[BF16:linear]] linear {activation = "none", in_width = 8 : i64, precision = "bf16", width = 8 : i64}
// DEDUP-NEXT: tmk.kernel @[[F32:linear_1]] linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
// DEDUP-NEXT: tmk.kernel @[[INT8:linear_2]] linear {activation = "none", in_width = 8 : i64, precision = "int8", width = 8 : i64}
// DEDUP-NEXT: tmk.kernel @[[Q4:linear_3]] linear {activation = "none", in_width = 8 : i64, precision = "q4", width = 8 : i64}
// DEDUP-NOT: tmk.kernel
// DEDUP: %[[A:.*]] = tmk.call @[[BF16]](%arg0,
// DEDUP-NEXT: %[[B:.*]] = tmk.call @[[F32]](%[[A]],
// DEDUP-NEXT: %[[C:.*]] = tmk.call @[[F32]](%[[B]],
// DEDUP-NEXT: %[[D:.*]] = tmk.call @[[BF16]](%[[C]],
// DEDUP-NEXT: %[[E:.*]] = tmk.call @[[INT8]](%[[D]],
// DEDUP-NEXT: %[[F:.*]] = tmk.call @[[INT8]](%[[E]],
// DEDUP-NEXT: %[[G:.*]] = tmk.call @[[Q4]](%[[F]],
// DEDUP-NEXT: tmk.call @[[Q4]](%[[G]],
func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  %a = tm.linear %x, %w {activation = "none", precision = "bf16"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = tm.linear %a, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %c = tm.linear %b, %w {activation = "none", precision = "f32"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %d = tm.linear %c, %w {activation = "none", precision = "bf16"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %e = tm.linear %d, %w {activation = "none", precision = "int8"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %f = tm.linear %e, %w {activation = "none", precision = "int8"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %g = tm.linear %f, %w {activation = "none", precision = "q4"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %h = tm.linear %g, %w {activation = "none", precision = "q4"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %h : tensor<?x8xf32>
}
