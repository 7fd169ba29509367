// tmk-dedup: kernels with the same kind and attributes become one; every
// call points at the first, in both functions. Kernels differing in any
// attribute (here the epilogue) stay apart. The kernels kept are renamed by
// kind, in order.
// RUN: tmc-opt %s --tmk-dedup | FileCheck %s
// RUN: tmc-opt %s --tmk-dedup=explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// CHECK: tmk.kernel @[[LIN:linear]] linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @[[RELU:linear_1]] linear {activation = "relu", in_width = 8 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @[[ADD:add]] add {width = 8 : i64}
// CHECK-NOT: tmk.kernel
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
tmk.kernel @linear_relu linear {activation = "relu", in_width = 8 : i64, width = 8 : i64}
tmk.kernel @add add {width = 8 : i64}
tmk.kernel @linear_1 linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
tmk.kernel @add_1 add {width = 8 : i64}
tmk.kernel @linear_2 linear {width = 8 : i64, in_width = 8 : i64, activation = "none"}

// CHECK-LABEL: func.func @encode
func.func @encode(%x: tensor<?x8xf32>) {
  %w = tmk.weight "w0" : tensor<8x8xf32>
  // CHECK: tmk.call @[[LIN]](
  %y = tmk.call @linear_2(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return
}

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tmk.weight "w1" : tensor<8x8xf32>
  // CHECK: %[[A:.*]] = tmk.call @[[LIN]](
  %a = tmk.call @linear(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[B:.*]] = tmk.call @[[RELU]](%[[A]]
  %b = tmk.call @linear_relu(%a, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[C:.*]] = tmk.call @[[LIN]](%[[B]]
  %c = tmk.call @linear_1(%b, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[D:.*]] = tmk.call @[[ADD]](%[[A]], %[[C]])
  %d = tmk.call @add(%a, %c) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: tmk.call @[[ADD]](%[[D]], %[[B]])
  %e = tmk.call @add_1(%d, %b) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}

// EXPLAIN: remark: kernel @linear (linear) serves 3 calls
// EXPLAIN: remark: kernel @linear_1 (linear) serves 1 call
// EXPLAIN: remark: kernel @add (add) serves 2 calls
