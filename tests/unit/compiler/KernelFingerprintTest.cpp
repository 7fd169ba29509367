//===- KernelFingerprintTest.cpp - Every field in a job's cache key -------===//
//
// The kernel cache finds a compile job's object without lowering it by the
// job's description (KernelCompiler.cpp), whose kernel and schedule parts
// are KernelDesc::fingerprint and Schedule::fingerprint. A field either
// leaves out would let one kernel's object stand in for another's: each
// field changed alone must change the text.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelDesc.h"
#include "compiler/Schedule.h"
#include "compiler/ScheduleFields.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

using namespace tmc;

namespace {

TEST(KernelFingerprint, EveryFieldChangesIt) {
  KernelDesc base;
  base.kind = KernelKind::attention;
  const std::vector<std::pair<const char *, std::function<void(KernelDesc &)>>> changes = {
      {"kind", [](KernelDesc &k) { k.kind = KernelKind::linear; }},
      {"width", [](KernelDesc &k) { k.width = 7; }},
      {"inWidth", [](KernelDesc &k) { k.inWidth = 7; }},
      {"tableRows", [](KernelDesc &k) { k.tableRows = 7; }},
      {"positionRows", [](KernelDesc &k) { k.positionRows = 7; }},
      {"heads", [](KernelDesc &k) { k.heads = 7; }},
      {"kvHeads", [](KernelDesc &k) { k.kvHeads = 7; }},
      {"headDim", [](KernelDesc &k) { k.headDim = 7; }},
      // The next double after 1.0: a name's readable number could hide it.
      {"scale", [](KernelDesc &k) { k.scale = std::nextafter(1.0, 2.0); }},
      {"eps", [](KernelDesc &k) { k.eps = 1e-300; }},
      {"theta", [](KernelDesc &k) { k.theta = -0.0; }},
      {"position", [](KernelDesc &k) { k.position = "learned"; }},
      {"activation", [](KernelDesc &k) { k.activation = "gelu"; }},
      {"variant", [](KernelDesc &k) { k.variant = "rmsnorm"; }},
      {"hasBias", [](KernelDesc &k) { k.hasBias = true; }},
      {"hasResidual", [](KernelDesc &k) { k.hasResidual = true; }},
      {"ropeColumns", [](KernelDesc &k) { k.ropeColumns = 64; }},
      {"hasLength", [](KernelDesc &k) { k.hasLength = true; }},
      {"precision", [](KernelDesc &k) { k.precision = "q4"; }},
      {"kvPrecision", [](KernelDesc &k) { k.kvPrecision = "f16"; }},
      {"windowKeys", [](KernelDesc &k) { k.windowKeys = true; }},
      {"decodeVariant", [](KernelDesc &k) { k.decodeVariant = false; }},
      {"mask.causal", [](KernelDesc &k) { k.mask.causal = true; }},
      {"mask.padding", [](KernelDesc &k) { k.mask.padding = true; }},
      {"mask.decoder", [](KernelDesc &k) { k.mask.decoder = true; }},
      {"mask.alibi", [](KernelDesc &k) { k.mask.alibi = true; }},
      {"mask.window", [](KernelDesc &k) { k.mask.window = 3; }},
      {"mask.dilated", [](KernelDesc &k) { k.mask.dilated = 3; }},
      {"mask.dilation", [](KernelDesc &k) { k.mask.dilation = 3; }},
      // Globals that a name's 32-bit hash of the list could not tell apart
      // are still different lists here.
      {"mask.globals", [](KernelDesc &k) { k.mask.globals = {0, 5}; }},
      {"mask.globals order", [](KernelDesc &k) { k.mask.globals = {5, 0}; }},
      {"mask.globals one", [](KernelDesc &k) { k.mask.globals = {50}; }},
      {"mask.randomPerRow", [](KernelDesc &k) { k.mask.randomPerRow = 2; }},
      {"mask.randomSeed", [](KernelDesc &k) { k.mask.randomSeed = 1ull << 63; }},
      {"mask.maxSeq", [](KernelDesc &k) { k.mask.maxSeq = 128; }},
  };
  std::set<std::string> seen = {base.fingerprint()};
  for (const auto &[field, change] : changes) {
    KernelDesc changed = base;
    change(changed);
    EXPECT_TRUE(seen.insert(changed.fingerprint()).second) << field;
    KernelDesc copy = changed;
    EXPECT_EQ(copy.fingerprint(), changed.fingerprint()) << field;
  }
}

TEST(ScheduleFingerprint, EveryFieldChangesIt) {
  // Printed in str() or not (algorithm_only, the GPU's fields in a CPU
  // schedule): the lowering may read any of them.
  const Schedule base;
  std::set<std::string> seen = {base.fingerprint()};
  for (const ScheduleField &field : scheduleFields()) {
    Schedule changed = base;
    field.set(changed, field.get(base) == field.max ? field.min : field.max);
    ASSERT_NE(field.get(changed), field.get(base)) << field.key;
    EXPECT_TRUE(seen.insert(changed.fingerprint()).second) << field.key;
  }
  Schedule gpu = base;
  gpu.gpu = true;
  EXPECT_EQ(base.str(), Schedule().str());
  EXPECT_NE(gpu.fingerprint(), base.fingerprint());
}

} // namespace
