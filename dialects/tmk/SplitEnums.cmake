# Splits TableGen's enum declarations (TMKEnums.h.inc) into the plain C++
# enum (KernelKind.h.inc: no MLIR type in it, so that the plain-data kernel
# plan, compiler/KernelPlan.h, can use the dialect's own KernelKind) and the
# rest (TMKEnumsAttr.h.inc: the attribute class, parsers and printers, which
# need MLIR). Run as cmake -DIN=... -DENUM_OUT=... -DREST_OUT=... -P SplitEnums.cmake.
file(READ "${IN}" text)
string(REGEX MATCH "enum class KernelKind : uint32_t {[^}]*};" enum "${text}")
if(NOT enum)
  message(FATAL_ERROR "${IN}: no 'enum class KernelKind' block")
endif()
string(REPLACE "${enum}" "" rest "${text}")
file(WRITE "${ENUM_OUT}.tmp"
  "// Generated from TMKEnums.h.inc by SplitEnums.cmake: the tmk dialect's KernelKind.\n"
  "namespace tmc {\nnamespace tmk {\n${enum}\n} // namespace tmk\n} // namespace tmc\n")
file(WRITE "${REST_OUT}.tmp" "${rest}")
# Only touch outputs that changed, so dependents do not rebuild needlessly.
file(COPY_FILE "${ENUM_OUT}.tmp" "${ENUM_OUT}" ONLY_IF_DIFFERENT)
file(COPY_FILE "${REST_OUT}.tmp" "${REST_OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${ENUM_OUT}.tmp" "${REST_OUT}.tmp")
