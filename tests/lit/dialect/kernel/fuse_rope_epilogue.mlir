// tmk-fuse-rope-epilogue: a rope reading a linear's result, or a leading part
// of it read by nothing else, is folded into the linear (rope_columns, the
// table rows as its last input); the ropes and kernels no call reads go.
// RUN: tmc-opt %s --split-input-file --tmk-fuse-rope-epilogue | FileCheck %s
// RUN: tmc-opt %s --split-input-file --tmk-fuse-rope-epilogue=explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// q, k and v of one projection: q and k turned (128 columns in heads of 64).
// CHECK-LABEL: tmk.kernel @rope_table rope_table
// CHECK-NOT: tmk.kernel @rope rope
// CHECK-NOT: tmk.kernel @qkv linear
// CHECK: tmk.kernel @[[FUSED:qkv_[0-9]+]] linear {activation = "none", head_dim = 64 : i64, in_width = 32 : i64, rope_columns = 128 : i64, width = 192 : i64}
// CHECK-NOT: tmk.kernel
// CHECK-LABEL: func.func @projection
// CHECK: %[[T:.*]] = tmk.call @rope_table(%{{.*}})
// CHECK: %[[Y:.*]] = tmk.call @[[FUSED]](%{{.*}}, %{{.*}}, %[[T]]) {from = "tm.linear"}
// CHECK-NEXT: %[[P:.*]]:3 = tmk.split %[[Y]]
// CHECK-NEXT: return %[[P]]#0, %[[P]]#1, %[[P]]#2
// EXPLAIN: remark: fused 2 ropes into this linear's epilogue (128 columns in heads of 64)
tmk.kernel @rope_table rope_table {head_dim = 64 : i64, theta = 1.0e4 : f64, width = 64 : i64}
tmk.kernel @qkv linear {activation = "none", in_width = 32 : i64, width = 192 : i64}
tmk.kernel @rope rope {head_dim = 64 : i64, heads = 1 : i64, width = 64 : i64}
func.func @projection(%x: tensor<?x32xf32>, %offset: i32) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %t = tmk.call @rope_table(%offset) {from = "tm.rope"} : (i32) -> tensor<?x64xf32>
  %w = tmk.weight "w" : tensor<192x32xf32>
  %y = tmk.call @qkv(%x, %w) {from = "tm.linear"} : (tensor<?x32xf32>, tensor<192x32xf32>) -> tensor<?x192xf32>
  %q, %k, %v = tmk.split %y : tensor<?x192xf32> -> tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
  %qr = tmk.call @rope(%q, %t) {from = "tm.rope"} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  %kr = tmk.call @rope(%k, %t) {from = "tm.rope"} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
  return %qr, %kr, %v : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// A q projection of its own, with a bias: every column turned.
// CHECK-LABEL: tmk.kernel @rope_table rope_table
// CHECK: tmk.kernel @[[FUSED:q_[0-9]+]] linear {activation = "none", bias, head_dim = 16 : i64, in_width = 32 : i64, rope_columns = 32 : i64, width = 32 : i64}
// CHECK-LABEL: func.func @q_alone
// CHECK: %[[Y:.*]] = tmk.call @[[FUSED]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {from = "tm.linear"}
// CHECK-NEXT: return %[[Y]]
tmk.kernel @rope_table rope_table {head_dim = 16 : i64, theta = 1.0e4 : f64, width = 16 : i64}
tmk.kernel @q linear {activation = "none", bias, in_width = 32 : i64, width = 32 : i64}
tmk.kernel @rope rope {head_dim = 16 : i64, heads = 2 : i64, width = 32 : i64}
func.func @q_alone(%x: tensor<?x32xf32>, %offset: i32) -> tensor<?x32xf32> {
  %t = tmk.call @rope_table(%offset) {from = "tm.rope"} : (i32) -> tensor<?x16xf32>
  %w = tmk.weight "w" : tensor<32x32xf32>
  %b = tmk.weight "b" : tensor<32xf32>
  %y = tmk.call @q(%x, %w, %b) {from = "tm.linear"} : (tensor<?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %r = tmk.call @rope(%y, %t) {from = "tm.rope"} : (tensor<?x32xf32>, tensor<?x16xf32>) -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}

// -----

// Declined, each for its reason; every call and kernel stays.
// CHECK-LABEL: func.func @declined
// CHECK-COUNT-6: tmk.call @rope
// EXPLAIN: remark: rope not fused into this linear's epilogue: the linear already ends in an activation or a residual sum
// EXPLAIN: remark: rope not fused into this linear's epilogue: the linear's result has readers other than one rope or one split
// EXPLAIN: remark: rope not fused into this linear's epilogue: a rotated part follows one that is not rotated
// EXPLAIN: remark: rope not fused into this linear's epilogue: its parts are turned with different tables
// EXPLAIN: remark: rope not fused into this linear's epilogue: its width is not a whole number of heads
tmk.kernel @rope_table rope_table {head_dim = 16 : i64, theta = 1.0e4 : f64, width = 16 : i64}
tmk.kernel @rope_table_2 rope_table {head_dim = 16 : i64, theta = 5.0e5 : f64, width = 16 : i64}
tmk.kernel @gelu linear {activation = "gelu", in_width = 16 : i64, width = 16 : i64}
tmk.kernel @plain linear {activation = "none", in_width = 16 : i64, width = 32 : i64}
tmk.kernel @odd linear {activation = "none", in_width = 16 : i64, width = 40 : i64}
tmk.kernel @rope rope {head_dim = 16 : i64, heads = 1 : i64, width = 16 : i64}
func.func @declined(%x: tensor<?x16xf32>, %offset: i32) -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>) {
  %t = tmk.call @rope_table(%offset) {from = "tm.rope"} : (i32) -> tensor<?x16xf32>
  %t2 = tmk.call @rope_table_2(%offset) {from = "tm.rope"} : (i32) -> tensor<?x16xf32>
  %w16 = tmk.weight "w16" : tensor<16x16xf32>
  %w32 = tmk.weight "w32" : tensor<32x16xf32>
  %w40 = tmk.weight "w40" : tensor<40x16xf32>
  // An activation before the turn.
  %a = tmk.call @gelu(%x, %w16) {from = "tm.linear"} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
  %ar = tmk.call @rope(%a, %t) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  // The unturned result read too.
  %b = tmk.call @plain(%x, %w32) {from = "tm.linear"} : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
  %b0, %b1 = tmk.split %b : tensor<?x32xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %br = tmk.call @rope(%b0, %t) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  // k turned, q before it not.
  %c = tmk.call @plain(%x, %w32) {from = "tm.linear"} : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
  %c0, %c1 = tmk.split %c : tensor<?x32xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %cr = tmk.call @rope(%c1, %t) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  // Two tables.
  %d = tmk.call @plain(%x, %w32) {from = "tm.linear"} : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
  %d0, %d1 = tmk.split %d : tensor<?x32xf32> -> tensor<?x16xf32>, tensor<?x16xf32>
  %dr0 = tmk.call @rope(%d0, %t) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %dr1 = tmk.call @rope(%d1, %t2) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  // 40 columns: not whole heads of 16.
  %e = tmk.call @odd(%x, %w40) {from = "tm.linear"} : (tensor<?x16xf32>, tensor<40x16xf32>) -> tensor<?x40xf32>
  %e0, %e1, %e2 = tmk.split %e : tensor<?x40xf32> -> tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>
  %er = tmk.call @rope(%e0, %t) {from = "tm.rope"} : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %ar, %br, %b, %cr, %dr0, %dr1, %er, %e2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x32xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>
}
