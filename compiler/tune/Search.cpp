//===- Search.cpp - The schedule search space of one kernel ---------------===//

#include "compiler/tune/Search.h"

#include <algorithm>
#include <set>

namespace tmc::tune {

namespace {

template <typename T> T pick(const std::vector<T> &values, std::mt19937 &rng) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

/// The vector width: the unit of the fields counted in vectors (inVectors).
bool isVectorWidth(const ScheduleField &field) { return field.intMember == &Schedule::vectorWidth; }

} // namespace

SearchSpace::SearchSpace(const KernelDesc &kernel, const TargetInfo &target)
    : kernel(kernel), target(target), base(defaultSchedule(kernel, target)) {
  for (const ScheduleField &field : scheduleFields())
    if (field.searchedFor(kernel))
      searched.push_back(&field);
}

Schedule SearchSpace::canonical(Schedule s) const {
  for (const ScheduleField &field : scheduleFields()) {
    // A field the kernel does not read, or that the kernel or the target
    // sets, takes the default's value.
    if (!field.readBy(kernel) || !field.tuned())
      field.set(s, field.get(base));
    else if (field.search.canonical)
      field.set(s, field.search.canonical(kernel, s, base));
  }
  return s;
}

bool SearchSpace::valid(const Schedule &s, std::string *why) const {
  if (llvm::Error error = validSchedule(kernel, target, s)) {
    *why = llvm::toString(std::move(error));
    return false;
  }
  if (kernel.kind != KernelKind::linear)
    return true;
  GemmLayout l = gemmLayout(kernel, s);
  // The register tile: accumulators, one weight row, one broadcast value.
  // AVX-512 and NEON have 32 vector registers, AVX2 16; a tile past them spills.
  const int registers = target.vectorRegisters;
  const int vectors = l.panelWidth / l.vectorWidth;
  if (l.tileRows > maxRegisterTileRows(vectors, registers)) {
    *why = "the register tile (" + std::to_string(vectors) + " vectors x " +
           std::to_string(l.tileRows) + " rows) needs more than " + std::to_string(registers) +
           " registers";
    return false;
  }
  int64_t rounded = (kernel.width + l.vectorWidth - 1) / l.vectorWidth * l.vectorWidth;
  if (l.panelWidth > std::max<int64_t>(rounded, l.vectorWidth)) {
    *why = "tile_cols wider than the layer";
    return false;
  }
  if (s.kBlock > 0 && s.kBlock < kernel.inWidth && s.kBlock % s.unrollK != 0) {
    *why = "unroll_k does not divide k_block";
    return false;
  }
  return true;
}

void SearchSpace::randomize(Schedule &s, const ScheduleField &field, std::mt19937 &rng) const {
  if (!field.search.values) {
    field.set(s, field.min + field.max - field.get(s)); // a flag: toggled
    return;
  }
  const int old = field.get(s);
  field.set(s, pick(field.search.values(kernel, target, s), rng));
  if (!isVectorWidth(field))
    return;
  // The fields counted in vectors keep their count.
  for (const ScheduleField *other : searched)
    if (other->inVectors)
      other->set(s, std::max(s.vectorWidth, other->get(s) / old * s.vectorWidth));
}

std::vector<Schedule> SearchSpace::seeds() const {
  std::vector<Schedule> out = {base};
  std::set<std::string> seen = {canonical(base).str()};
  for (const ScheduleField *field : searched) {
    if (!field->search.seeds)
      continue;
    for (Schedule s : field->search.seeds(kernel, base)) {
      s = canonical(s);
      std::string why;
      if (valid(s, &why) && seen.insert(s.str()).second)
        out.push_back(s);
    }
  }
  return out;
}

Schedule SearchSpace::mutate(const Schedule &from, std::mt19937 &rng) const {
  for (int attempt = 0; attempt < 64; ++attempt) {
    Schedule s = from;
    int changes = std::uniform_int_distribution<int>(1, 2)(rng);
    for (int c = 0; c < changes; ++c) {
      const int field = std::uniform_int_distribution<int>(0, int(searched.size()) - 1)(rng);
      randomize(s, *searched[field], rng);
    }
    s = canonical(s);
    std::string why;
    if (valid(s, &why))
      return s;
  }
  return canonical(from);
}

Schedule SearchSpace::crossover(const Schedule &a, const Schedule &b, std::mt19937 &rng) const {
  std::bernoulli_distribution coin(0.5);
  Schedule s = a;
  for (const ScheduleField *field : searched) {
    // The fields counted in vectors go with the vector width.
    if (field->inVectors || !coin(rng))
      continue;
    field->set(s, field->get(b));
    if (isVectorWidth(*field))
      for (const ScheduleField *other : searched)
        if (other->inVectors)
          other->set(s, other->get(b));
  }
  s = canonical(s);
  std::string why;
  return valid(s, &why) ? s : canonical(a);
}

bool SearchSpace::decodesAsDefault(const Schedule &schedule) const {
  return !decodeKernelSuffix(kernel, base).empty() &&
         decodeKernelSchedule(kernel, schedule).str() == decodeKernelSchedule(kernel, base).str();
}

size_t SearchSpace::sizeEstimate() const {
  size_t size = 1;
  for (const ScheduleField *field : searched)
    size *= field->search.values ? field->search.values(kernel, target, base).size() : 2;
  return size;
}

} // namespace tmc::tune
