// A stand-in for the header `tmc tune` generates (KernelBench::harnessSource),
// describing StandInKernel.cpp's kernel: a linear kernel's shape (a packed
// weight, a decoding-step variant) with a scalar argument, so that building
// and running the measuring harness with it covers every path.
extern "C" int tmk_cand(halide_buffer_t *, halide_buffer_t *, int32_t, halide_buffer_t *);
extern "C" int tmk_cand_decode(halide_buffer_t *, halide_buffer_t *, int32_t, halide_buffer_t *);
extern "C" int tmk_cand_pack(halide_buffer_t *, halide_buffer_t *);

namespace kernel {

constexpr int64_t kTokens = 16;

constexpr Argument kArguments[] = {
    {2, {8, kT}, false, 1},
    {2, {4, 8}, false, 1},
    {0, {}, false, 1},
    {2, {4, kT}, false, 1},
};

constexpr size_t kPackedWeight = 1;
constexpr int64_t kPackedK = 8;

inline int call(int64_t T, halide_buffer_t *const *buffers) {
  return (T == 1 ? tmk_cand_decode : tmk_cand)(buffers[0], buffers[1], static_cast<int32_t>(T),
                                               buffers[3]);
}

} // namespace kernel
