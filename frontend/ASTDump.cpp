//===- ASTDump.cpp - The --emit=ast tree dump
//------------------------------===//
//
// One node per line, indented two spaces per level, each ending in
// `@line:col`. Tests match this text with FileCheck, so keep it stable.
//
//===----------------------------------------------------------------------===//

#include "frontend/Frontend.h"

#include "frontend/Diagnostics.h"

#include "llvm/Support/Format.h"

using namespace llvm;

namespace tmc {

namespace {

class ASTDumper {
public:
  ASTDumper(const SourceMgr &sourceMgr, raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  void dump(const ast::Model &model) {
    line(0, "Model " + model.name, model.loc);
    for (const ast::Assignment &assignment : model.assignments)
      dump(1, assignment);
    for (const ast::Stack &stack : model.stacks) {
      line(1, "Stack " + stack.kind, stack.loc);
      for (const ast::Assignment &assignment : stack.assignments)
        dump(2, assignment);
      for (const ast::LayerOverride &override : stack.overrides) {
        line(2,
             "Override layers " + std::to_string(override.first) + ".." +
                 std::to_string(override.last),
             override.loc);
        for (const ast::Assignment &assignment : override.assignments)
          dump(3, assignment);
      }
    }
  }

private:
  void line(unsigned depth, const std::string &text, SMLoc loc) {
    os.indent(2 * depth) << text << " @";
    if (!loc.isValid()) {
      os << "?\n";
      return;
    }
    auto [lineNo, column] = sourceMgr.getLineAndColumn(loc);
    os << lineNo << ':' << column << '\n';
  }

  void dump(unsigned depth, const ast::Assignment &assignment) {
    line(depth, "Assignment " + assignment.key, assignment.loc);
    dump(depth + 1, *assignment.value);
  }

  void dump(unsigned depth, const ast::Value &value) {
    using Kind = ast::Value::Kind;
    switch (value.kind) {
    case Kind::Int:
      line(depth, "Int " + std::to_string(value.intValue), value.loc);
      return;
    case Kind::Float:
      line(depth, "Float " + formatFloat(value.floatValue), value.loc);
      return;
    case Kind::Bool:
      line(depth, value.boolValue ? "Bool true" : "Bool false", value.loc);
      return;
    case Kind::Name:
      line(depth, "Name " + value.name, value.loc);
      return;
    case Kind::Call:
      line(depth, "Call " + value.name, value.loc);
      for (const ast::Argument &arg : value.args) {
        line(depth + 1,
             arg.name.empty() ? std::string("Argument (positional)")
                              : "Argument " + arg.name,
             arg.loc);
        dump(depth + 2, *arg.value);
      }
      return;
    case Kind::List:
    case Kind::Sum:
      line(depth, value.kind == Kind::List ? "List" : "Sum", value.loc);
      for (const ast::ValuePtr &element : value.elements)
        dump(depth + 1, *element);
      return;
    }
  }

  const SourceMgr &sourceMgr;
  raw_ostream &os;
};

} // namespace

void dumpAST(const ast::Model &model, const SourceMgr &sourceMgr,
             raw_ostream &os) {
  ASTDumper(sourceMgr, os).dump(model);
}

} // namespace tmc
