//===- TuningDb.cpp - The tuning database of `tmc tune` -------------------===//

#include "compiler/TuningDb.h"

#include "compiler/Error.h"
#include "compiler/Toolchain.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#ifndef TMC_VERSION
#define TMC_VERSION "0.0.0-dev"
#endif

namespace tmc {

using nlohmann::json;

const char *tmcVersion() { return TMC_VERSION; }

std::string kernelSignatureText(const KernelDesc &kernel) {
  std::ostringstream os;
  std::vector<BufferShape> sig = kernelSignature(kernel);
  for (size_t i = 0; i < sig.size(); ++i) {
    os << (i ? "," : "") << (sig[i].isInt32 ? "i32" : "f32");
    if (sig[i].isScalar)
      continue;
    os << "[";
    for (size_t d = 0; d < sig[i].extents.size(); ++d) {
      int64_t e = sig[i].extents[d];
      os << (d ? "x" : "");
      if (e == BufferShape::kTokens)
        os << "T";
      else if (e == BufferShape::kKeys)
        os << "K";
      else if (e == BufferShape::kSource)
        os << "S";
      else
        os << e;
    }
    os << "]";
  }
  return os.str();
}

namespace {

json toJson(const TuningEntry &e) {
  json history = json::array();
  for (const auto &[trial, ms] : e.history)
    history.push_back({trial, ms});
  return {{"kernel", e.kernel},       {"signature", e.signature},
          {"target", e.target},       {"tmc_version", e.tmcVersion},
          {"model", e.model},         {"schedule", e.schedule},
          {"default_schedule", e.defaultSchedule}, {"origin", e.origin},
          {"tokens", e.tokens},       {"threads", e.threads},
          {"calls", e.calls},         {"default_ms", e.defaultMs},
          {"best_ms", e.bestMs},      {"default_decode_ms", e.defaultDecodeMs},
          {"best_decode_ms", e.bestDecodeMs}, {"fma_peak_gflops", e.fmaPeakGflops},
          {"memory_ms", e.memoryMs},  {"trials", e.trials},
          {"confirmed", e.confirmed}, {"history", history}};
}

/// Reads one entry; an error names the offending field.
llvm::Expected<TuningEntry> fromJson(const json &j) {
  if (!j.is_object())
    return makeError("an entry must be a JSON object");
  TuningEntry e;
  std::string why; // what the first missing or malformed field lacks
  auto str = [&](const char *key, std::string *out, bool required = true) {
    auto it = j.find(key);
    if (it == j.end() && !required)
      return true;
    if (it == j.end() || !it->is_string()) {
      why = std::string("the entry lacks '") + key + "' (a string)";
      return false;
    }
    *out = it->get<std::string>();
    return true;
  };
  // A field that is there but wrong is said to be, with its value: "lacks
  // 'best_ms'" for best_ms = -1 would send the reader looking for a key.
  auto wrong = [&](const char *key, const json &value, const std::string &expected) {
    std::string text = value.dump();
    if (text.size() > 80)
      text = text.substr(0, 80) + "...";
    why = std::string("'") + key + "' is " + text + ", expected " + expected;
    return false;
  };
  auto num = [&](const char *key, double *out) {
    auto it = j.find(key);
    if (it == j.end()) {
      why = std::string("the entry lacks '") + key + "' (a number >= 0)";
      return false;
    }
    if (!it->is_number() || it->get<double>() < 0)
      return wrong(key, *it, "a number >= 0");
    *out = it->get<double>();
    return true;
  };
  auto integer = [&](const char *key, int *out, int lo, int hi) {
    auto it = j.find(key);
    std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (it == j.end()) {
      why = std::string("the entry lacks '") + key + "' (" + range + ")";
      return false;
    }
    // The unsigned check first: get<int64_t> of a value past 2^63 would wrap.
    if (!it->is_number_integer() ||
        (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi)) ||
        it->get<int64_t>() < lo || it->get<int64_t>() > hi)
      return wrong(key, *it, range);
    *out = static_cast<int>(it->get<int64_t>());
    return true;
  };
  if (!str("kernel", &e.kernel) || !str("signature", &e.signature) ||
      !str("target", &e.target) || !str("tmc_version", &e.tmcVersion) ||
      !str("schedule", &e.schedule) || !str("model", &e.model, false) ||
      !str("default_schedule", &e.defaultSchedule, false) ||
      !str("origin", &e.origin, false) ||
      !num("default_ms", &e.defaultMs) || !num("best_ms", &e.bestMs) ||
      !integer("trials", &e.trials, 0, 1 << 30) || !integer("tokens", &e.tokens, 1, 1 << 20) ||
      !integer("threads", &e.threads, 0, 1 << 16) || !integer("calls", &e.calls, 0, 1 << 20))
    return makeError(why);
  for (auto [key, out] : {std::pair{"default_decode_ms", &e.defaultDecodeMs},
                          std::pair{"best_decode_ms", &e.bestDecodeMs},
                          std::pair{"fma_peak_gflops", &e.fmaPeakGflops},
                          std::pair{"memory_ms", &e.memoryMs}})
    if (auto it = j.find(key); it != j.end() && it->is_number())
      *out = it->get<double>();
  if (auto it = j.find("confirmed"); it != j.end() && it->is_boolean())
    e.confirmed = it->get<bool>();
  if (auto it = j.find("history"); it != j.end()) {
    if (!it->is_array())
      return makeError("'history' must be an array of [trial, ms] pairs");
    for (const json &point : *it) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number_integer() ||
          !point[1].is_number())
        return makeError("'history' must be an array of [trial, ms] pairs");
      e.history.emplace_back(point[0].get<int>(), point[1].get<double>());
    }
  }
  return e;
}

} // namespace

llvm::Expected<TuningDb> loadTuningDb(const std::string &path, bool allowMissing) {
  TuningDb db;
  std::error_code ec;
  if (allowMissing && !std::filesystem::exists(path, ec))
    return db;
  if (std::filesystem::is_directory(path, ec))
    return makeError(path + ": is a directory, not a tuning database");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(path + ": cannot read the tuning database: " + std::strerror(errno));
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    std::string where = path + ":" + std::to_string(number);
    if (!header) {
      if (j.is_discarded() || !j.is_object() || !j.contains("format") ||
          j["format"] != "tmc-tuning-db")
        return makeError(where +
                         ": not a tmc tuning database (its first line must be "
                         "{\"format\": \"tmc-tuning-db\", \"schema\": " +
                         std::to_string(kTuningDbSchema) + "}; write one with tmc tune)");
      if (!j.contains("schema") || !j["schema"].is_number_integer() ||
          j["schema"].get<int64_t>() != kTuningDbSchema) {
        std::string found = j.contains("schema") ? j["schema"].dump() : "none";
        return makeError(where + ": tuning database schema " + found +
                         ", but this tmc reads schema " + std::to_string(kTuningDbSchema) +
                         " (re-tune with tmc tune into a new file)");
      }
      header = true;
      continue;
    }
    if (j.is_discarded())
      return makeError(where + ": corrupt tuning database: the line is not valid JSON");
    llvm::Expected<TuningEntry> entry = fromJson(j);
    if (!entry)
      return withContext(entry.takeError(), where + ": corrupt tuning database");
    entry->line = number;
    db.entries.push_back(std::move(*entry));
  }
  if (in.bad())
    return makeError(path + ": cannot read the tuning database");
  if (!header)
    return makeError(path + ": empty file, not a tmc tuning database (write one with tmc tune)");
  return db;
}

llvm::Error saveTuningDb(const std::string &path, const TuningDb &db) {
  std::string text =
      json{{"format", "tmc-tuning-db"}, {"schema", kTuningDbSchema}}.dump() + "\n";
  for (const TuningEntry &e : db.entries)
    text += toJson(e).dump() + "\n";
  return writeFileAtomically(path, text);
}

bool entryUsable(const TuningEntry &e, const KernelDesc &kernel, const TargetInfo &target,
                 std::string *why) {
  if (e.target != target.halideTarget) {
    *why = "tuned for another target (" + e.target + ", not " + target.halideTarget + ")";
    return false;
  }
  if (e.tmcVersion != tmcVersion()) {
    *why = "stale: tuned with tmc " + e.tmcVersion + ", this is tmc " + tmcVersion() +
           " (re-tune it)";
    return false;
  }
  if (e.signature != kernelSignatureText(kernel)) {
    *why = "stale: the kernel's buffers changed (" + e.signature + " -> " +
           kernelSignatureText(kernel) + ")";
    return false;
  }
  llvm::Expected<Schedule> s = parseSchedule(e.schedule, defaultSchedule(kernel, target));
  if (llvm::Error error = s ? validSchedule(kernel, target, *s) : s.takeError()) {
    *why = "invalid schedule: " + llvm::toString(std::move(error));
    return false;
  }
  return true;
}

const TargetInfo *variantFor(const TuningEntry &entry, const TargetInfo &target,
                             std::vector<TargetInfo> *storage) {
  *storage = target.concreteTargets();
  for (const TargetInfo &t : *storage)
    if (t.halideTarget == entry.target)
      return &t;
  return &storage->front();
}

ScheduleTable selectSchedules(const TuningDb &db, const KernelPlan &plan,
                              const TargetInfo &target, std::vector<std::string> *warnings,
                              std::vector<std::string> *found,
                              std::vector<std::string> *atDefault) {
  std::map<std::string, const KernelDesc *> kernels, formerNames;
  for (const KernelDesc &k : plan.kernels) {
    kernels[k.name()] = &k;
    formerNames[k.legacyName()] = &k;
  }
  const bool multi = !target.variants.empty();
  // Per (variant, kernel): the usable entry with the lowest time.
  std::map<std::pair<std::string, std::string>, const TuningEntry *> best;
  std::vector<TargetInfo> variants;
  for (const TuningEntry &e : db.entries) {
    std::string where = "line " + std::to_string(e.line) + ": entry for kernel '" + e.kernel + "'";
    auto it = kernels.find(e.kernel);
    if (it == kernels.end()) {
      // Names written before they were readable: the same kernel, but its
      // schedule is not re-read under a name it was not tuned under.
      auto former = formerNames.find(e.kernel);
      if (former != formerNames.end() && former->first != former->second->name())
        warnings->push_back(where + ": stale: an older tmc's name for kernel '" +
                            former->second->name() + "' (re-tune it): ignored");
      else
        warnings->push_back(where + " matches no kernel of this model: ignored");
      continue;
    }
    std::string why;
    const TargetInfo &variant = *variantFor(e, target, &variants);
    if (!entryUsable(e, *it->second, variant, &why)) {
      warnings->push_back(where + ": " + why + ": ignored");
      continue;
    }
    const TuningEntry *&slot = best[{e.target, e.kernel}];
    // tmc tune replaces a kernel's entry, so two usable ones come from files
    // merged or edited by hand: say which is used rather than pick silently.
    if (slot) {
      const TuningEntry &used = e.bestMs < slot->bestMs ? e : *slot;
      std::ostringstream ms;
      ms << used.bestMs;
      warnings->push_back("lines " + std::to_string(slot->line) + " and " +
                          std::to_string(e.line) + ": two entries for kernel '" + e.kernel +
                          "' (target " + e.target + "): using line " +
                          std::to_string(used.line) + ", the faster (best_ms " + ms.str() + ")");
    }
    if (!slot || e.bestMs < slot->bestMs)
      slot = &e;
  }
  ScheduleTable table;
  for (const auto &[key, entry] : best) {
    const KernelDesc &kernel = *kernels[entry->kernel];
    const TargetInfo &variant = *variantFor(*entry, target, &variants);
    Schedule s = llvm::cantFail(parseSchedule(entry->schedule, defaultSchedule(kernel, variant)),
                                "checked by entryUsable");
    std::string name = multi ? entry->kernel + " (" + variant.isaName() + ")" : entry->kernel;
    if (s.str() == defaultSchedule(kernel, variant).str()) {
      if (atDefault)
        atDefault->push_back(name);
      continue;
    }
    table[scheduleKey(kernel, variant)] = s;
    found->push_back(name);
  }
  return table;
}

} // namespace tmc
