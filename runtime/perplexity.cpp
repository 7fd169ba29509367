//===- perplexity.cpp - Perplexity of a text under a compiled decoder -----===//

#include "runtime/perplexity.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {

namespace {

/// -log softmax(row)[target], in double: the logits of a large vocabulary
/// summed in float would lose the small terms.
double negativeLogLikelihood(const float *row, int64_t vocab, int32_t target) {
  double largest = row[0];
  for (int64_t i = 1; i < vocab; ++i)
    largest = std::max(largest, static_cast<double>(row[i]));
  double sum = 0.0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(static_cast<double>(row[i]) - largest);
  return largest + std::log(sum) - static_cast<double>(row[target]);
}

} // namespace

int64_t perplexityStride(int64_t maxSeq) { return std::max<int64_t>(1, maxSeq / 2); }

bool measurePerplexity(Session &session, const std::vector<int32_t> &ids,
                       PerplexityResult *result, std::string *error) {
  const tmr_model_desc &desc = session.model();
  const int64_t count = static_cast<int64_t>(ids.size());
  if (count < 2) {
    *error = "--perplexity: the text has " + std::to_string(count) +
             " token(s); scoring needs at least 2 (each token is predicted from those before)";
    return false;
  }
  if (desc.max_seq < 2) {
    *error = "--perplexity: the model's max_seq is " + std::to_string(desc.max_seq) +
             ": a window of at least 2 positions is needed to predict a token from another";
    return false;
  }
  const int64_t window = desc.max_seq, stride = perplexityStride(desc.max_seq);
  const int64_t vocab = desc.output_width;
  auto start = std::chrono::steady_clock::now();
  double total = 0.0;
  int64_t scored = 0, windows = 0;
  AlignedVector<float> logits;
  // Token p is predicted by the row of position p - 1; `scoredUntil` is the
  // first token no window has scored yet (token 0 has no context).
  int64_t scoredUntil = 1;
  for (int64_t begin = 0; scoredUntil < count; begin += stride) {
    const int64_t end = std::min(begin + window, count);
    std::vector<int32_t> tokens(ids.begin() + begin, ids.begin() + end);
    session.reset();
    if (!session.run(tokens, {}, &logits, error))
      return false;
    ++windows;
    for (int64_t p = std::max(scoredUntil, begin + 1); p < end; ++p, ++scored)
      total += negativeLogLikelihood(logits.data() + (p - 1 - begin) * vocab, vocab, ids[p]);
    scoredUntil = end;
  }
  result->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result->meanNegativeLogLikelihood = total / static_cast<double>(scored);
  result->perplexity = std::exp(result->meanNegativeLogLikelihood);
  result->textTokens = count;
  result->scoredTokens = scored;
  result->windows = windows;
  result->stride = stride;
  return true;
}

bool readPerplexityText(const std::string &path, std::string *text, std::string *error) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat says
  // what it is.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = "--perplexity: cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0;
  if (ok && !S_ISREG(info.st_mode)) {
    *error = "--perplexity: " + path + " is not a regular file";
    ok = false;
  } else if (ok && info.st_size > kMaxPerplexityTextBytes) {
    *error = "--perplexity: " + path + " has " + std::to_string(info.st_size) +
             " bytes; at most " + std::to_string(kMaxPerplexityTextBytes) + " are read";
    ok = false;
  }
  if (ok) {
    text->resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (ok && done < text->size()) {
      ssize_t n = ::read(fd, text->data() + done, text->size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        *error = "--perplexity: cannot read " + path +
                 (n < 0 ? std::string(": ") + std::strerror(errno) : ": it shrank while read");
        ok = false;
      } else {
        done += static_cast<size_t>(n);
      }
    }
  }
  ::close(fd);
  return ok;
}

} // namespace tmr
