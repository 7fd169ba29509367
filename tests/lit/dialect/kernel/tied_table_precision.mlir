// tmk-tied-table-precision: an embedding whose table linears multiply in one
// reduced precision (a tied head's) and nothing else reads looks it up in
// that precision, from the head's packed copy; every other lookup stays f32.
// RUN: tmc-opt %s --tmk-tied-table-precision | FileCheck %s
// RUN: tmc-opt %s --tmk-tied-table-precision --tmk-dedup | FileCheck %s --check-prefix=DEDUP
// RUN: tmc-opt %s --tmk-tied-table-precision=explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// The lookups of "tied" (an int8 head's table, read by both functions) get
// int8 kernels of their own; "untied" (no linear), "mixed" (an int8 and a
// q4 linear), "shared" (also read as a segment table) and "plain" (an f32 linear's)
// keep theirs. The kernels the tied lookups left are erased.
// CHECK: tmk.kernel @[[T1:e_tied_0]] embed {position = "none", precision = "int8", scale = 1.000000e+00 : f64, table_rows = 16 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @[[T2:e_tied2_1]] embed {position = "none", precision = "int8", scale
// CHECK-NEXT: tmk.kernel @e_untied embed {position = "none", scale = 1.000000e+00 : f64, table_rows = 16 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @e_mixed embed {position = "none", scale = 1.000000e+00 : f64, table_rows = 16 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @e_shared embed {position = "none", scale = 1.000000e+00 : f64, table_rows = 16 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @e_plain embed {position = "none", scale = 1.000000e+00 : f64, table_rows = 16 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @head linear
// CHECK-LABEL: func.func @encode
// CHECK: tmk.call @[[T1]](
// CHECK-LABEL: func.func @forward
// CHECK: tmk.call @[[T2]](
// CHECK-NEXT: tmk.call @e_untied(
// CHECK-NEXT: tmk.call @e_mixed(
// CHECK-NEXT: tmk.call @e_shared(
// CHECK-NEXT: tmk.call @e_plain(

// After dedup the two int8 lookups share one kernel, the f32 ones another.
// DEDUP: tmk.kernel @embed embed {position = "none", precision = "int8", {{.*}}}
// DEDUP-NEXT: tmk.kernel @embed_1 embed {position = "none", scale
// DEDUP-NOT: tmk.kernel @embed_2

// EXPLAIN-COUNT-2: remark: the lookup reads 'tied' as the tied head packs it, in int8
// EXPLAIN-NOT: remark

tmk.kernel @e_tied embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @e_tied2 embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @e_untied embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @e_mixed embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @e_shared embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @e_plain embed {position = "none", scale = 1.0 : f64, table_rows = 16 : i64, width = 8 : i64}
tmk.kernel @head linear {activation = "none", in_width = 8 : i64, precision = "int8", width = 16 : i64}
tmk.kernel @head_q4 linear {activation = "none", in_width = 8 : i64, precision = "q4", width = 16 : i64}
tmk.kernel @head_f32 linear {activation = "none", in_width = 8 : i64, width = 16 : i64}
tmk.kernel @seg segments {position_rows = 16 : i64, width = 8 : i64}

func.func @encode(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  %t = tmk.weight "tied" : tensor<16x8xf32>
  %x = tmk.call @e_tied(%tokens, %offset, %t) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}

func.func @forward(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x16xf32> {
  %t = tmk.weight "tied" : tensor<16x8xf32>
  %u = tmk.weight "untied" : tensor<16x8xf32>
  %m = tmk.weight "mixed" : tensor<16x8xf32>
  %s = tmk.weight "shared" : tensor<16x8xf32>
  %p = tmk.weight "plain" : tensor<16x8xf32>
  %x = tmk.call @e_tied2(%tokens, %offset, %t) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  %a = tmk.call @e_untied(%tokens, %offset, %u) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  %b = tmk.call @e_mixed(%tokens, %offset, %m) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  %c = tmk.call @e_shared(%tokens, %offset, %s) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  %d = tmk.call @e_plain(%tokens, %offset, %p) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  %n = tmk.call @seg(%c, %tokens, %s) {from = "tm.add_segments"} : (tensor<?x8xf32>, tensor<?xi32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %y = tmk.call @head(%x, %t) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %y1 = tmk.call @head(%a, %m) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %y2 = tmk.call @head_q4(%b, %m) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %y3 = tmk.call @head(%n, %s) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %y4 = tmk.call @head_f32(%d, %p) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %y4 : tensor<?x16xf32>
}
