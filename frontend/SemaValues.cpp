//===- SemaValues.cpp - Typed reading of spec values, with diagnostics ----===//

#include "frontend/SemaValues.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace llvm;

namespace tmc::sema {

using VK = ast::Value::Kind;

const char *describe(VK kind) {
  switch (kind) {
  case VK::Int:
    return "an integer";
  case VK::Float:
    return "a float";
  case VK::Bool:
    return "a boolean";
  case VK::Name:
    return "a name";
  case VK::Call:
    return "a call";
  case VK::List:
    return "a list";
  case VK::Sum:
    return "a sum of terms ('+')";
  }
  return "a value";
}

std::string joinNames(ArrayRef<Choice> choices) {
  std::string text;
  for (const Choice &choice : choices) {
    if (!text.empty())
      text += ", ";
    text += choice.name;
  }
  return text;
}

const ast::Value *Chosen::arg(StringRef name) const {
  for (const ast::Argument *argument : args)
    if (argument->name == name)
      return argument->value.get();
  return nullptr;
}

std::optional<int64_t> ValueReader::integer(const ast::Value &value,
                                            StringRef what, int64_t min,
                                            int64_t max) {
  if (value.kind != VK::Int) {
    diags.error(value.loc, "expected an integer for '" + what + "', found " +
                               describe(value.kind));
    return std::nullopt;
  }
  if (value.intValue < min) {
    diags.error(value.loc, "'" + what + "' must be " +
                               (min == 1 ? Twine("> 0") : ">= " + Twine(min)) +
                               ", found " + Twine(value.intValue));
    return std::nullopt;
  }
  if (value.intValue > max) {
    diags.error(value.loc, "'" + what + "' must be at most " + Twine(max) +
                               ", found " + Twine(value.intValue));
    return std::nullopt;
  }
  return value.intValue;
}

std::optional<bool> ValueReader::boolean(const ast::Value &value,
                                         StringRef what) {
  if (value.kind == VK::Bool)
    return value.boolValue;
  diags.error(value.loc, "expected true or false for '" + what + "', found " +
                             describe(value.kind));
  return std::nullopt;
}

std::optional<double> ValueReader::number(const ast::Value &value,
                                          StringRef what, bool positive) {
  double number;
  if (value.kind == VK::Float) {
    number = value.floatValue;
  } else if (value.kind == VK::Int) {
    number = static_cast<double>(value.intValue);
  } else {
    diags.error(value.loc, "expected a number for '" + what + "', found " +
                               describe(value.kind));
    return std::nullopt;
  }
  if (positive && !(number > 0)) {
    diags.error(value.loc,
                "'" + what + "' must be > 0, found " +
                    (value.kind == VK::Int ? std::to_string(value.intValue)
                                           : formatFloat(number)));
    return std::nullopt;
  }
  return number;
}

std::optional<Chosen> ValueReader::choose(const ast::Value &value,
                                          StringRef what,
                                          ArrayRef<Choice> choices) {
  if (value.kind != VK::Name && value.kind != VK::Call) {
    diags.error(value.loc, "expected one of " + joinNames(choices) + " for '" +
                               what + "', found " + describe(value.kind));
    return std::nullopt;
  }
  const Choice *choice =
      find_if(choices, [&](const Choice &c) { return c.name == value.name; });
  if (choice == choices.end()) {
    SmallVector<StringRef, 8> names;
    for (const Choice &c : choices)
      names.push_back(c.name);
    std::string message = "unknown value '" + value.name + "' for '" +
                          what.str() + "'; expected one of " +
                          joinNames(choices);
    if (StringRef guess = closestMatch(value.name, names); !guess.empty())
      diags.errorWithFix(value.loc, message, guess,
                         "did you mean '" + guess + "'?");
    else
      diags.error(value.loc, message);
    return std::nullopt;
  }

  Chosen chosen;
  chosen.index = choice - choices.begin();
  chosen.value = &value;
  bool ok = true;
  for (const ast::Argument &argument : value.args) {
    if (argument.name.empty()) {
      if (!choice->positional) {
        diags.error(
            argument.loc,
            "'" + choice->name + "' takes " +
                (choice->args.empty()
                     ? Twine("no arguments")
                     : "named arguments (" + choice->args.front() + " = ...)") +
                ", found a value without a name");
        ok = false;
      } else if (chosen.positional) {
        diags.error(argument.loc, "'" + choice->name + "' takes one argument");
        ok = false;
      } else {
        chosen.positional = argument.value.get();
      }
      continue;
    }
    if (!is_contained(choice->args, StringRef(argument.name))) {
      std::string message = "unknown argument '" + argument.name + "' for '" +
                            choice->name.str() + "'";
      if (choice->args.empty()) {
        diags.error(argument.loc, message + "; it takes no arguments");
      } else {
        message += "; expected " + join(choice->args, ", ");
        if (StringRef guess = closestMatch(argument.name, choice->args);
            !guess.empty())
          diags.errorWithFix(argument.loc, message, guess,
                             "did you mean '" + guess + "'?");
        else
          diags.error(argument.loc, message);
      }
      ok = false;
      continue;
    }
    if (const ast::Argument *const *first = find_if(
            chosen.args,
            [&](const ast::Argument *a) { return a->name == argument.name; });
        first != chosen.args.end()) {
      diags.error(argument.loc, "duplicate argument '" + argument.name + "'");
      diags.note((*first)->loc, "first given here");
      ok = false;
      continue;
    }
    chosen.args.push_back(&argument);
  }
  for (StringRef required : choice->required) {
    if (!chosen.arg(required) && ok) {
      diags.error(value.loc,
                  "'" + choice->name + "' needs the argument '" + required +
                      "'",
                  "write " + choice->name + "(" +
                      join(choice->required, " = ..., ") + " = ...)");
      ok = false;
    }
  }
  if (!ok)
    return std::nullopt;
  return chosen;
}

std::optional<NormSpec> ValueReader::norm(const ast::Value &value,
                                          StringRef what, bool allowNone,
                                          bool &isNone) {
  static const StringRef eps[] = {"eps"};
  SmallVector<Choice, 3> choices = {{"layernorm", eps}, {"rmsnorm", eps}};
  if (allowNone)
    choices.push_back({"none"});
  isNone = false;
  std::optional<Chosen> chosen = choose(value, what, choices);
  if (!chosen)
    return std::nullopt;
  if (chosen->index == 2) {
    isNone = true;
    return std::nullopt;
  }
  NormSpec norm;
  norm.kind = chosen->index == 0 ? NormKind::LayerNorm : NormKind::RMSNorm;
  norm.loc = value.loc;
  if (const ast::Value *epsValue = chosen->arg("eps")) {
    std::optional<double> number =
        this->number(*epsValue, "eps", /*positive=*/true);
    if (!number)
      return std::nullopt;
    norm.eps = *number;
  }
  return norm;
}

std::optional<Precision> ValueReader::precision(const ast::Value &value,
                                               StringRef what) {
  // In the order of the diagnostics' "expected one of" list.
  const Choice choices[] = {{"f32"}, {"bf16"}, {"int8"}, {"q4"}};
  const Precision precisions[] = {Precision::F32, Precision::BF16, Precision::Int8, Precision::Q4};
  std::optional<Chosen> chosen = choose(value, what, choices);
  if (!chosen)
    return std::nullopt;
  return precisions[chosen->index];
}

std::optional<CachePrecision> ValueReader::cachePrecision(const ast::Value &value, StringRef what) {
  const Choice choices[] = {{"f32"}, {"f16"}, {"bf16"}};
  const CachePrecision precisions[] = {CachePrecision::F32, CachePrecision::F16,
                                       CachePrecision::BF16};
  std::optional<Chosen> chosen = choose(value, what, choices);
  if (!chosen)
    return std::nullopt;
  return precisions[chosen->index];
}

KeyMap ValueReader::collectKeys(ArrayRef<ast::Assignment> assignments,
                                StringRef block, ArrayRef<StringRef> known,
                                ArrayRef<Misplaced> misplaced) {
  KeyMap keys;
  for (const ast::Assignment &assignment : assignments) {
    StringRef key = assignment.key;
    if (!is_contained(known, key)) {
      const Misplaced *elsewhere = find_if(
          misplaced, [&](const Misplaced &m) { return is_contained(m.keys, key); });
      if (elsewhere != misplaced.end()) {
        diags.error(assignment.loc,
                    "'" + key + "' is not a key of the " + block + " block",
                    "'" + key + "' belongs " + elsewhere->where);
      } else if (StringRef guess = closestMatch(key, known); !guess.empty()) {
        suggested.insert(guess);
        diags.errorWithFix(assignment.loc, "unknown key '" + key + "'", guess,
                           "did you mean '" + guess + "'?");
      } else {
        diags.error(assignment.loc, "unknown key '" + key + "'",
                    "the " + block + " block takes " + join(known, ", "));
      }
      continue;
    }
    auto [it, inserted] = keys.try_emplace(key, &assignment);
    if (!inserted) {
      diags.error(assignment.loc, "duplicate key '" + key + "'");
      diags.note(it->second->loc, "first given here");
    }
  }
  return keys;
}

} // namespace tmc::sema
