// tmk-window-caches: a cache that only sliding-window attention reads keeps
// window - 1 rows before a run plus one run's (`keep`, a smaller `capacity`),
// and the module's runs are chunked (`tmk.run_chunk`); anything that needs
// older keys, or a module a chunk would change, keeps its caches whole.
// RUN: tmc-opt %s --split-input-file --tmk-window-caches | FileCheck %s
// RUN: tmc-opt %s --split-input-file --tmk-window-caches --tmk-window-caches | FileCheck %s
// RUN: tmc-opt %s --split-input-file --tmk-window-caches=explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Windows of 64 (a sliding window) and 32 (dilated) of max_seq 4096: the
// chunk is max(64, min(max(256, 2 x 64), 1024, 4096 / 4)) = 256, each cache its window's
// keep + 256. The whole layer's cache (causal only), the cache a global
// token reads, and the cache also read as queries stay whole.
// CHECK-LABEL: module attributes {tmk.run_chunk = 256 : i64}
// The kernels reading a bounded cache get window_keys; the others do not.
// CHECK: tmk.kernel @window attention {{{.*}}, width = 8 : i64, window_keys}
// CHECK: tmk.kernel @dilated attention {{{.*}}, width = 8 : i64, window_keys}
// CHECK: tmk.kernel @causal attention {{{.*}}, width = 8 : i64}{{$}}
// CHECK: tmk.kernel @global attention {{{.*}}, width = 8 : i64}{{$}}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 319 : i64, keep = 63 : i64, name = "l0.k"}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 319 : i64, keep = 63 : i64, name = "l0.v"}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 287 : i64, keep = 31 : i64, name = "l1.k"}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 4096 : i64, name = "full.k"}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 4096 : i64, name = "global.k"}
// CHECK: tmk.cache_append %{{.*}} at %{{.*}} {capacity = 4096 : i64, name = "query.k"}
// EXPLAIN: remark: cache 'l0.k' holds 319 rows: the 63 positions its window reads before a run, and a run of up to 256
// EXPLAIN: remark: cache 'l0.v' holds 319 rows
// EXPLAIN: remark: cache 'l1.k' holds 287 rows
// EXPLAIN-NOT: remark: cache 'full.k'
// EXPLAIN-NOT: remark: cache 'global.k'
// EXPLAIN-NOT: remark: cache 'query.k'
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 64, max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @dilated attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, dilated = 32, dilation = 2, max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @causal attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @global attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 64, globals = [0], max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k0 = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "l0.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %v0 = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "l0.v"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a0 = tmk.call @window(%x, %k0, %v0) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %k1 = tmk.cache_append %a0 at %offset {capacity = 4096 : i64, name = "l1.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a1 = tmk.call @dilated(%a0, %k1, %k1) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %k2 = tmk.cache_append %a1 at %offset {capacity = 4096 : i64, name = "full.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a2 = tmk.call @causal(%a1, %k2, %k2) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %k3 = tmk.cache_append %a2 at %offset {capacity = 4096 : i64, name = "global.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a3 = tmk.call @global(%a2, %k3, %k3) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %k4 = tmk.cache_append %a3 at %offset {capacity = 4096 : i64, name = "query.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a4 = tmk.call @window(%k4, %k4, %k4) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a4 : tensor<?x8xf32>
}
}

// -----

// A window of 256 of max_seq 16384: chunks of 2 windows, at most 1024 tokens
// (max(256, min(max(256, 2 x 256), 1024, 16384 / 4)) = 512); keep + 512 =
// 767 rows. At max_seq 1536 the quarter bounds it: 384 (below).
// CHECK-LABEL: module attributes {tmk.run_chunk = 512 : i64}
// CHECK: {capacity = 767 : i64, keep = 255 : i64, name = "long.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 256, max_seq = 16384>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 16384 : i64, name = "long.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
}

// -----

// CHECK-LABEL: module attributes {tmk.run_chunk = 384 : i64}
// CHECK: {capacity = 639 : i64, keep = 255 : i64, name = "quarter.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 256, max_seq = 1536>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 1536 : i64, name = "quarter.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
}

// -----

// A small max_seq: chunks of max(8, 64 / 4) = 16 tokens; keep + 16 = 23 rows.
// CHECK-LABEL: module attributes {tmk.run_chunk = 16 : i64}
// CHECK: {capacity = 23 : i64, keep = 7 : i64, name = "small.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 8, max_seq = 64>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 64 : i64, name = "small.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
}

// -----

// A window nearly as long as max_seq: keep + chunk would not be smaller.
// CHECK-LABEL: module {
// CHECK: {capacity = 64 : i64, name = "wide.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 40, max_seq = 64>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 64 : i64, name = "wide.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
}

// -----

// Pooling mixes a run's rows: a chunk would pool part of them.
// CHECK-LABEL: module {
// CHECK: {capacity = 4096 : i64, name = "pooled.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 64, max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @pool pool {variant = "mean", width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32, %length: i32) -> tensor<1x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "pooled.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %p = tmk.call @pool(%a, %length) {from = "tm.pool"} : (tensor<?x8xf32>, i32) -> tensor<1x8xf32>
  return %p : tensor<1x8xf32>
}
}

// -----

// Attention over the run's own rows (not a cache) sees only a chunk's.
// CHECK-LABEL: module {
// CHECK: {capacity = 4096 : i64, name = "beside.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 64, max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @own attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<>, scale = 0.5 : f64, width = 8 : i64}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "beside.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %b = tmk.call @own(%a, %a, %a) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %b : tensor<?x8xf32>
}
}

// -----

// An encoder-decoder: the cross caches @encode fills are read whole; the
// decoder's windowed self-attention cache is bounded (the source's padded
// cross-attention reads caches only).
// CHECK-LABEL: module attributes {tmk.run_chunk = 256 : i64}
// CHECK: {capacity = 4096 : i64, name = "cross.k"}
// CHECK: {capacity = 319 : i64, keep = 63 : i64, name = "self.k"}
module {
tmk.kernel @window attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 64, max_seq = 4096>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @cross attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<padding = true>, scale = 0.5 : f64, width = 8 : i64}
func.func @encode(%x: tensor<?x8xf32>, %offset: i32) {
  %c = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "cross.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return
}
func.func @forward(%x: tensor<?x8xf32>, %offset: i32, %sl: i32) -> tensor<?x8xf32> {
  %k = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "self.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @window(%x, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %ck = tmk.cache_read {capacity = 4096 : i64, name = "cross.k"} : tensor<?x8xf32>
  %b = tmk.call @cross(%a, %ck, %ck, %sl) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %b : tensor<?x8xf32>
}
}
