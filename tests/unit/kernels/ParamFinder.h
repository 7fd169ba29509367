//===- ParamFinder.h - The Parameters a Halide pipeline reads ---*- C++ -*-===//
//
// Shared by the kernel tests: LoweredKernel carries only its Arguments, and
// JIT realization needs the Parameter objects (buffers and scalars).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Halide.h"

#include <map>
#include <string>

namespace tmc::test {

/// Every Parameter (buffers and scalars) the pipeline reads, by name.
class ParamFinder : public Halide::Internal::IRGraphVisitor {
public:
  std::map<std::string, Halide::Internal::Parameter> params;

private:
  using IRGraphVisitor::visit;
  void visit(const Halide::Internal::Call *op) override {
    if (op->param.defined())
      params[op->param.name()] = op->param;
    IRGraphVisitor::visit(op);
  }
  void visit(const Halide::Internal::Variable *op) override {
    if (op->param.defined())
      params[op->param.name()] = op->param;
  }
};

} // namespace tmc::test
