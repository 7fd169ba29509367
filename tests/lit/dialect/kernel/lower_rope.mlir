// tm-lower-to-kernels: a tm.rope becomes a rope_table call (the rows' cos
// and sin, from the offset) and a rope call reading those rows. One table per
// function, offset, head_dim and theta, made at the offset's definition (the
// start of the function for an argument), shared by every rope that needs it.
// RUN: tmc-opt %s --tm-lower-to-kernels | FileCheck %s
// RUN: tmc-opt %s --tm-lower-to-kernels --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK-DAG: tmk.kernel @rope_table rope_table {head_dim = 4 : i64, theta = 1.000000e+04 : f64, width = 4 : i64}
// CHECK-DAG: tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 8 : i64}
// CHECK-DAG: tmk.kernel @rope_table_{{[0-9]+}} rope_table {head_dim = 4 : i64, theta = 5.000000e+05 : f64, width = 4 : i64}
// CHECK-DAG: tmk.kernel @rope_table_{{[0-9]+}} rope_table {head_dim = 2 : i64, theta = 1.000000e+04 : f64, width = 2 : i64}
// CHECK-LABEL: func.func @ropes
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8xf32>, %[[K:.*]]: tensor<?x4xf32>, %[[OFF:.*]]: i32)
// The tables first, in the order the ropes needed them.
// CHECK-NEXT: %[[T2:.*]] = tmk.call @rope_table_{{[0-9]+}}(%[[OFF]]) {from = "tm.rope"} : (i32) -> tensor<?x2xf32>
// CHECK-NEXT: %[[T1:.*]] = tmk.call @rope_table_{{[0-9]+}}(%[[OFF]]) {from = "tm.rope"} : (i32) -> tensor<?x4xf32>
// CHECK-NEXT: %[[T0:.*]] = tmk.call @rope_table(%[[OFF]]) {from = "tm.rope"} : (i32) -> tensor<?x4xf32>
// CHECK-NEXT: %{{.*}} = tmk.call @rope(%[[Q]], %[[T0]]) {from = "tm.rope"} : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %{{.*}} = tmk.call @rope_{{[0-9]+}}(%[[K]], %[[T0]]) {from = "tm.rope"}
// CHECK-NEXT: %{{.*}} = tmk.call @rope_{{[0-9]+}}(%[[Q]], %[[T1]]) {from = "tm.rope"}
// CHECK-NEXT: %{{.*}} = tmk.call @rope_{{[0-9]+}}(%[[Q]], %[[T2]]) {from = "tm.rope"}
// A table carries the first rope's spec line but not its value name:
// tmc verify compares named values only.
// LOC: tmk.call @rope_table(%{{.*}}) {from = "tm.rope"} : (i32) -> tensor<?x4xf32> loc(#[[FILE:loc[0-9]*]])
// LOC: tmk.call @rope(%{{.*}}) {from = "tm.rope"} : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32> loc(#[[NAMED:loc[0-9]*]])
// LOC-DAG: #[[FILE]] = loc("model.tm":7:3)
// LOC-DAG: #[[NAMED]] = loc("layers.0.q"(#[[FILE]]))
#q = loc("model.tm":7:3)
func.func @ropes(%q: tensor<?x8xf32>, %k: tensor<?x4xf32>, %offset: i32) -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %qr = tm.rope %q at %offset {heads = 2 : i64, head_dim = 4 : i64, theta = 1.0e4 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32> loc("layers.0.q"(#q))
  %kr = tm.rope %k at %offset {heads = 1 : i64, head_dim = 4 : i64, theta = 1.0e4 : f64} : (tensor<?x4xf32>, i32) -> tensor<?x4xf32>
  %other = tm.rope %q at %offset {heads = 2 : i64, head_dim = 4 : i64, theta = 5.0e5 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %narrow = tm.rope %q at %offset {heads = 4 : i64, head_dim = 2 : i64, theta = 1.0e4 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %qr, %kr, %other, %narrow : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
