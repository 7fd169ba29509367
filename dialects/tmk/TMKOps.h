//===- TMKOps.h - Operations of the tmk dialect -----------------*- C++ -*-===//
#pragma once

#include "dialects/tm/TMAttrs.h"
#include "dialects/tmk/TMKDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tmk/KernelKind.h"
#include "dialects/tmk/TMKEnumsAttr.h.inc"

#define GET_OP_CLASSES
#include "dialects/tmk/TMKOps.h.inc"
