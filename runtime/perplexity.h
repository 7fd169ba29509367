//===- perplexity.h - Perplexity of a text under a compiled decoder -*- C++ -*-===//
//
// `MODEL --weights W --tokenizer DIR --perplexity FILE.txt [--json]`: how well
// the model predicts a text, the measure that says what reduced precision
// costs. The text is tokenized whole and scored in windows of max_seq tokens
// that advance by half a window (max_seq / 2, at least 1): the first window
// scores every token after its first, each later one only the tokens past the
// previous window's end, so every token but the text's first is scored once,
// with at least max_seq / 2 tokens of context once the text is that long (the
// "strided" evaluation of fixed-length models, as Hugging Face's guide to
// perplexity describes it). Perplexity is exp(mean negative log-likelihood),
// the log-softmax taken in double.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/session.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmr {

struct PerplexityResult {
  double perplexity = 0.0;
  double meanNegativeLogLikelihood = 0.0; ///< nats per scored token
  int64_t textTokens = 0;                 ///< tokens of the whole text
  int64_t scoredTokens = 0;               ///< textTokens - 1
  int64_t windows = 0;
  int64_t stride = 0;
  double seconds = 0.0; ///< the model's runs and the scoring, not tokenizing
};

/// The window advance for a model of `maxSeq` positions.
int64_t perplexityStride(int64_t maxSeq);

/// Scores `ids` (at least 2) with `session`'s model, a decoder with an LM head;
/// the session is reset before each window.
bool measurePerplexity(Session &session, const std::vector<int32_t> &ids,
                       PerplexityResult *result, std::string *error);

/// Reads a text file for --perplexity: a regular file of at most
/// kMaxPerplexityTextBytes, so that a device or FIFO fails instead of blocking
/// or growing without bound.
constexpr int64_t kMaxPerplexityTextBytes = int64_t(256) << 20;
bool readPerplexityText(const std::string &path, std::string *text, std::string *error);

} // namespace tmr
