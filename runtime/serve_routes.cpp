//===- serve_routes.cpp - What `MODEL serve` answers, apart from HTTP -----===//

#include "runtime/serve_routes.h"

#include <boost/beast/core/detail/base64.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <ctime>
#include <span>

namespace tmr::serve {

using nlohmann::json;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);

/// A request field that is wrong: the 400 reply names it.
struct BadField {
  std::string param, message;
};

json parseBody(const std::string &body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    throw BadField{"", "the body is not valid JSON"};
  if (!parsed.is_object())
    throw BadField{"", "the body must be a JSON object"};
  return parsed;
}

/// An OpenAI field a route does not implement, accepted only at the value
/// that leaves the answer as it is (clients such as LangChain send the
/// defaults), described as `off` in the reply that refuses any other.
struct OffOnlyField {
  const char *name, *off;
  bool (*isOff)(const json &value);
};

bool nullOr(const json &value, const json &off) {
  if (value.is_null())
    return true;
  if (off.is_number())
    return value.is_number() && value.get<double>() == off.get<double>();
  return value == off;
}

const OffOnlyField kCompletionOffOnly[] = {
    {"best_of", "1", [](const json &v) { return nullOr(v, 1); }},
    {"suffix", "null", [](const json &v) { return v.is_null(); }},
    {"logit_bias", "{}", [](const json &v) { return nullOr(v, json::object()); }},
};

/// A client's value as an error message quotes it: JSON, ASCII (escapes
/// for the rest), cut to kShownChars (a 5000-character suffix or a list of
/// 300 ids is not worth echoing whole).
std::string shown(const json &value) {
  constexpr size_t kShownChars = 60;
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true);
  if (text.size() > kShownChars)
    text = text.substr(0, kShownChars) + "...";
  return text;
}

/// Refuses a field the route does not read: ignored, it would change what
/// the client gets without a word (a typo such as "max_token" silently
/// taking the default, logprobs asked for and never sent).
void checkFields(const json &request, const std::string &route,
                 std::initializer_list<const char *> reads,
                 std::span<const OffOnlyField> offOnly = {}) {
  for (auto it = request.begin(); it != request.end(); ++it) {
    const std::string &key = it.key();
    if (std::any_of(reads.begin(), reads.end(), [&](const char *name) { return key == name; }))
      continue;
    auto rule = std::find_if(offOnly.begin(), offOnly.end(),
                             [&](const OffOnlyField &field) { return key == field.name; });
    if (rule != offOnly.end()) {
      if (rule->isOff(*it))
        continue;
      throw BadField{key, key + " " + shown(*it) + " is not supported by this server (" + route +
                              " takes it only as " + rule->off + ")"};
    }
    std::string known;
    for (const char *name : reads)
      known += std::string(known.empty() ? "" : ", ") + name;
    throw BadField{key, "unknown field \"" + key + "\": " + route + " reads " + known};
  }
}

/// Where each character of `text` begins as a JSON reply shows it
/// (dumpJson): a UTF-8 sequence is one character, any other byte one U+FFFD
/// (a token may end inside a character). OpenAI's text_offset counts these.
std::vector<size_t> characterStarts(const std::string &text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80             ? 1
                          : (lead & 0xE0) == 0xC0 ? 2
                          : (lead & 0xF0) == 0xE0 ? 3
                          : (lead & 0xF8) == 0xF0 ? 4
                                                  : 0;
    bool whole = length > 0 && i + length <= text.size();
    for (size_t k = 1; whole && k < length; ++k)
      whole = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    starts.push_back(i);
    i += whole ? length : 1;
  }
  return starts;
}

/// An embedding as OpenAI's encoding_format "base64" sends it: the floats'
/// little-endian bytes.
std::string base64Floats(const std::vector<float> &values) {
  static_assert(std::endian::native == std::endian::little);
  namespace base64 = boost::beast::detail::base64;
  std::string text(base64::encoded_size(values.size() * sizeof(float)), '\0');
  text.resize(base64::encode(text.data(), values.data(), values.size() * sizeof(float)));
  return text;
}

/// An integer field in [low, high], or `fallback` when absent or null.
int64_t integerField(const json &request, const char *name, int64_t low, int64_t high,
                     int64_t fallback) {
  auto it = request.find(name);
  if (it == request.end() || it->is_null())
    return fallback;
  if (!it->is_number_integer() &&
      !(it->is_number_float() && std::floor(it->get<double>()) == it->get<double>()))
    throw BadField{name, std::string(name) + " must be an integer"};
  double value = it->get<double>();
  if (value < static_cast<double>(low) || value > static_cast<double>(high))
    throw BadField{name, std::string(name) + " " + it->dump() + " is outside [" +
                             std::to_string(low) + ", " + std::to_string(high) + "]"};
  return it->is_number_unsigned() ? static_cast<int64_t>(it->get<uint64_t>()) : it->get<int64_t>();
}

double numberField(const json &request, const char *name, double low, double high, bool openLow,
                   double fallback) {
  auto it = request.find(name);
  if (it == request.end() || it->is_null())
    return fallback;
  if (!it->is_number())
    throw BadField{name, std::string(name) + " must be a number"};
  double value = it->get<double>();
  if (!(openLow ? value > low : value >= low) || value > high)
    throw BadField{name, std::string(name) + " " + it->dump() + " is outside " +
                             (openLow ? "(" : "[") + json(low).dump() + ", " + json(high).dump() +
                             "]"};
  return value;
}

/// Token ids of one input: a string (tokenized) or an array of ids.
std::vector<int32_t> tokensOf(const json &input, const char *param, const tmr_model_desc &desc,
                              const Tokenizer *tokenizer) {
  std::string error;
  std::optional<std::vector<int32_t>> ids = tokensFromJson(input, param, desc, tokenizer, &error);
  if (!ids)
    throw BadField{param, error};
  return std::move(*ids);
}

/// The bytes of `text` that can be sent: up to the first stop string (then
/// *stopped), else all but a tail that may begin a stop string or an
/// incomplete UTF-8 character.
size_t sendable(const std::string &text, const std::vector<std::string> &stops, bool final,
                bool *stopped) {
  size_t cut = std::string::npos;
  for (const std::string &stop : stops)
    cut = std::min(cut, text.find(stop));
  if (cut != std::string::npos) {
    *stopped = true;
    return cut;
  }
  if (final)
    return text.size();
  size_t keep = text.size();
  for (const std::string &stop : stops)
    for (size_t n = std::min(stop.size() - 1, text.size()); n > 0; --n)
      if (text.compare(text.size() - n, n, stop, 0, n) == 0) {
        keep = std::min(keep, text.size() - n);
        break;
      }
  // Back off to a character boundary: a UTF-8 lead byte whose character is cut.
  for (size_t back = 1; back <= 3 && back <= keep; ++back) {
    unsigned char c = static_cast<unsigned char>(text[keep - back]);
    if ((c & 0xC0) == 0x80)
      continue;
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (need > back)
      keep -= back;
    break;
  }
  return keep;
}

/// JSON text; bytes that are not UTF-8 (a token may end inside a character
/// of generated text) become U+FFFD rather than an exception.
std::string dumpJson(const json &value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

std::optional<std::vector<int32_t>> tokensFromJson(const json &input, const std::string &field,
                                                   const tmr_model_desc &desc,
                                                   const Tokenizer *tokenizer, std::string *error) {
  std::vector<int32_t> ids;
  if (input.is_string()) {
    if (!tokenizer) {
      *error = field + ": text needs --tokenizer DIR (or give token ids)";
      return std::nullopt;
    }
    ids = tokenizer->addSpecialTokens(tokenizer->encode(input.get<std::string>()));
  } else if (input.is_array()) {
    for (size_t i = 0; i < input.size(); ++i) {
      const json &id = input[i];
      if (!id.is_number_integer()) {
        *error = field + ": element " + std::to_string(i) + " is not an integer token id";
        return std::nullopt;
      }
      int64_t value = id.get<int64_t>();
      if (value < 0 || value >= desc.vocab) {
        *error = field + ": token id " + std::to_string(value) + " at index " + std::to_string(i) +
                 " is outside [0, " + std::to_string(desc.vocab - 1) + "]";
        return std::nullopt;
      }
      ids.push_back(static_cast<int32_t>(value));
    }
  } else {
    *error = field + " must be a string or an array of token ids";
    return std::nullopt;
  }
  if (ids.empty()) {
    *error = field + " holds no tokens";
    return std::nullopt;
  }
  if (static_cast<int64_t>(ids.size()) > desc.max_seq) {
    *error = field + " has " + std::to_string(ids.size()) + " tokens; this model holds at most " +
             std::to_string(desc.max_seq);
    return std::nullopt;
  }
  return ids;
}

Reply errorReply(int status, const std::string &message, const std::string &param) {
  Reply reply;
  reply.status = status;
  const char *type = status == 404   ? "not_found_error"
                     : status == 405 ? "method_not_allowed"
                     : status == 413 ? "request_too_large"
                     : status == 503 ? "unavailable"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  reply.body = dumpJson(json{{"error",
                              {{"message", message},
                               {"type", type},
                               {"param", param.empty() ? json(nullptr) : json(param)}}}});
  return reply;
}

Metrics::Route Routes::routeOf(const std::string &path) {
  if (path == "/v1/completions")
    return Metrics::kCompletions;
  if (path == "/v1/embeddings")
    return Metrics::kEmbeddings;
  if (path == "/v1/classify")
    return Metrics::kClassify;
  if (path == "/health")
    return Metrics::kHealth;
  if (path == "/metrics")
    return Metrics::kMetrics;
  return Metrics::kOther;
}

Reply Routes::handle(const std::string &method, const std::string &path, const std::string &body,
                     const std::function<bool()> &clientGone) {
  const Metrics::Route route = routeOf(path);
  const bool post = route == Metrics::kCompletions || route == Metrics::kEmbeddings ||
                    route == Metrics::kClassify;
  if (route == Metrics::kOther)
    return errorReply(404, "no route " + path +
                               " (routes: POST /v1/completions, POST "
                               "/v1/embeddings, POST /v1/classify, GET /health, GET /metrics)");
  if (method != (post ? "POST" : "GET"))
    return errorReply(405, path + " takes " + (post ? "POST" : "GET") + ", not " + method);
  if (route == Metrics::kHealth) {
    EngineStats stats = engine.stats();
    Reply reply;
    reply.status = draining ? 503 : 200;
    reply.body = dumpJson(json{{"status", draining ? "draining" : "ok"},
                               {"model", desc.name},
                               {"slots", stats.slots},
                               {"active", stats.active},
                               {"queued", stats.queued}});
    return reply;
  }
  if (route == Metrics::kMetrics) {
    Reply reply;
    reply.contentType = "text/plain; version=0.0.4";
    reply.body = metrics.text(engine.stats());
    return reply;
  }
  if (draining)
    return errorReply(503, "the server is shutting down");
  try {
    if (route == Metrics::kCompletions)
      return completions(body, clientGone);
    return encode(body, route == Metrics::kClassify, clientGone);
  } catch (const BadField &bad) {
    return errorReply(400, bad.message, bad.param);
  } catch (const json::exception &e) {
    return errorReply(400, std::string("bad request: ") + e.what());
  }
}

Reply Routes::completions(const std::string &body, const std::function<bool()> &clientGone) {
  if (std::string(desc.output_kind) != "logits" || desc.cache_bytes == 0)
    return errorReply(
        404, std::string("model '") + desc.name +
                 "' does not continue text: /v1/completions needs a decoder with "
                 "an LM head (this one answers " +
                 (std::string(desc.output_kind) == "classes" ? "/v1/classify" : "/v1/embeddings") +
                 ")");
  json request = parseBody(body);
  checkFields(request, "/v1/completions",
              {"model", "prompt", "source", "max_tokens", "temperature", "top_p", "top_k", "seed",
               "stop", "stop_token_ids", "stream", "stream_options", "n", "user", "logprobs",
               "echo", "presence_penalty", "frequency_penalty"},
              kCompletionOffOnly);
  if (auto it = request.find("stream_options");
      it != request.end() && !it->is_null() && !it->is_object())
    throw BadField{"stream_options", "stream_options must be an object"};
  auto job = std::make_shared<Job>();
  if (!request.contains("prompt"))
    throw BadField{"prompt", "prompt is required"};
  const json &prompt = request["prompt"];
  // OpenAI clients send one prompt as a one-element list too, a text or (as
  // lm-evaluation-harness does) a list of ids.
  bool onePrompt =
      prompt.is_array() && prompt.size() == 1 && (prompt[0].is_string() || prompt[0].is_array());
  if (prompt.is_array() && prompt.size() > 1 && (prompt[0].is_string() || prompt[0].is_array()))
    throw BadField{"prompt", "prompt holds " + std::to_string(prompt.size()) +
                                 " prompts: this server completes one prompt a request (send "
                                 "each as its own request; they are batched together)"};
  job->tokens = tokensOf(onePrompt ? prompt[0] : prompt, "prompt", desc, tokenizer);
  // An encoder-decoder continues the prompt from a source (text or ids).
  if (desc.encoder_decoder) {
    if (!request.contains("source"))
      throw BadField{"source", "source is required: this encoder-decoder model decodes the "
                               "prompt from a source"};
    job->source = tokensOf(request["source"], "source", desc, tokenizer);
  } else if (request.contains("source")) {
    throw BadField{"source", "source applies to an encoder-decoder model; this one is a decoder"};
  }
  const int64_t room = desc.max_seq - static_cast<int64_t>(job->tokens.size());
  if (room < 1)
    throw BadField{"prompt", "prompt has " + std::to_string(job->tokens.size()) +
                                 " tokens, which fill max_seq (" + std::to_string(desc.max_seq) +
                                 "): nothing can follow"};
  if (request.contains("n") && !request["n"].is_null() && request["n"] != 1)
    throw BadField{"n", "n must be 1 (one completion per request)"};
  // echo: the reply's text and logprobs begin with the prompt's, which is
  // then scored even when nothing follows (max_tokens 0).
  if (auto it = request.find("echo"); it != request.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw BadField{"echo", "echo must be true or false"};
    job->echo = it->get<bool>();
  }
  job->maxTokens = integerField(request, "max_tokens", job->echo ? 0 : 1, room,
                                std::min(limits.defaultMaxTokens, room));
  job->sampling.temperature =
      static_cast<float>(numberField(request, "temperature", 0, 100, false, 1.0));
  job->sampling.topP = static_cast<float>(numberField(request, "top_p", 0, 1, true, 1.0));
  job->sampling.topK = static_cast<int32_t>(integerField(request, "top_k", 0, desc.vocab, 0));
  job->sampling.presencePenalty =
      static_cast<float>(numberField(request, "presence_penalty", -2, 2, false, 0));
  job->sampling.frequencyPenalty =
      static_cast<float>(numberField(request, "frequency_penalty", -2, 2, false, 0));
  job->sampling.seed = static_cast<uint64_t>(
      integerField(request, "seed", 0, INT64_MAX, static_cast<int64_t>(nextId.load())));
  std::vector<std::string> stops;
  if (auto it = request.find("stop"); it != request.end() && !it->is_null()) {
    if (it->is_string())
      stops.push_back(it->get<std::string>());
    else if (it->is_array() && it->size() <= 4 &&
             std::all_of(it->begin(), it->end(), [](const json &s) { return s.is_string(); }))
      for (const json &s : *it)
        stops.push_back(s.get<std::string>());
    else
      throw BadField{"stop", "stop must be a string or an array of at most 4 strings"};
    if (std::any_of(stops.begin(), stops.end(), [](const std::string &s) { return s.empty(); }))
      throw BadField{"stop", "stop strings must not be empty"};
    if (!stops.empty() && !tokenizer)
      throw BadField{"stop", "stop strings need the server started with --tokenizer DIR; use "
                             "stop_token_ids"};
  }
  if (auto it = request.find("stop_token_ids"); it != request.end() && !it->is_null())
    job->stopTokens = tokensOf(*it, "stop_token_ids", desc, nullptr);
  // OpenAI's legacy completions: at most 5 likeliest tokens a step.
  job->logprobs = static_cast<int32_t>(integerField(request, "logprobs", 0, 5, -1));
  bool stream = false;
  if (auto it = request.find("stream"); it != request.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw BadField{"stream", "stream must be true or false"};
    stream = it->get<bool>();
  }
  if (stream && job->echo)
    throw BadField{"echo", "echo is not supported with stream (ask without stream)"};
  std::string why;
  if (!engine.submit(job, &why))
    return errorReply(503, why);

  const std::string id = "cmpl-" + std::to_string(nextId++);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  const int64_t promptTokens = static_cast<int64_t>(job->tokens.size());
  // Progress of one completion, a token at a time: a stop string may end
  // the text inside any token, and a stream sends one event per token.
  struct Progress {
    std::vector<int32_t> received; ///< from the job so far
    size_t used = 0;               ///< tokens taken into `text`
    std::string text;              ///< received[0, used) decoded, cut at a stop string
    std::vector<size_t> offsets;   ///< where in `text` each taken token's text begins
    size_t sentTokens = 0, sentBytes = 0;
    bool jobDone = false, stopped = false, finished = false;
    bool complete() const { return stopped || (jobDone && used == received.size()); }
  };
  auto progress = std::make_shared<Progress>();
  // Takes the next token into the text, waiting a while for one when none
  // is pending; false (error set) when the job failed.
  auto takeToken = [this, job, progress, stops](std::string *error) {
    Progress &p = *progress;
    if (p.used == p.received.size() && !p.jobDone) {
      std::vector<int32_t> more;
      job->wait(p.received.size(), &more, &p.jobDone, kPoll);
      p.received.insert(p.received.end(), more.begin(), more.end());
      if (p.jobDone && job->finishReason() == "error") {
        *error = job->error();
        return false;
      }
    }
    if (p.used == p.received.size())
      return true;
    p.offsets.push_back(p.text.size());
    ++p.used;
    // An id the tokenizer lacks (a padded vocabulary's) adds no text; the
    // reply's token_ids still carry it.
    if (tokenizer)
      p.text = tokenizer->decodeKnown(std::span<const int32_t>(p.received.data(), p.used));
    size_t cut = sendable(p.text, stops, false, &p.stopped);
    if (p.stopped) { // the tokens after the one that completed a stop string are dropped
      p.text.resize(cut);
      p.received.resize(p.used);
      job->cancel();
    }
    return true;
  };
  auto reason = [job, progress] {
    return progress->stopped ? std::string("stop") : job->finishReason();
  };
  // A token as the logprobs name it: its text, or "token_id:ID" when the
  // server has no tokenizer.
  auto pieceOf = [this](int32_t id) {
    std::string piece, error;
    if (!tokenizer || !tokenizer->decode(std::span<const int32_t>(&id, 1), &piece, &error))
      return "token_id:" + std::to_string(id);
    return piece;
  };
  // OpenAI's logprobs object: four arrays, one entry a token. A token
  // without a score (an echoed prompt's first) has nulls.
  struct LogprobsArrays {
    json tokens = json::array(), chosen = json::array(), top = json::array(),
         offsets = json::array();
  };
  auto addEntry = [pieceOf](LogprobsArrays &arrays, int32_t token, const TokenLogprobs *value,
                            size_t offset) {
    const std::string piece = pieceOf(token);
    arrays.tokens.push_back(piece);
    arrays.offsets.push_back(offset);
    if (!value) {
      arrays.chosen.push_back(nullptr);
      arrays.top.push_back(nullptr);
      return;
    }
    arrays.chosen.push_back(value->logprob);
    // The chosen token's too, as OpenAI's API does: up to logprobs + 1.
    json likeliest = json::object();
    for (const auto &[other, logprob] : value->top)
      likeliest.emplace(pieceOf(other), logprob);
    likeliest.emplace(piece, value->logprob);
    arrays.top.push_back(std::move(likeliest));
  };
  // The arrays as a reply's object; their offsets (bytes of `text`, the
  // text the reply carries) become characters.
  auto logprobsJson = [](LogprobsArrays arrays, const std::string &text) {
    const std::vector<size_t> starts = characterStarts(text);
    for (json &offset : arrays.offsets)
      offset =
          std::lower_bound(starts.begin(), starts.end(), offset.get<size_t>()) - starts.begin();
    return json{{"tokens", std::move(arrays.tokens)},
                {"token_logprobs", std::move(arrays.chosen)},
                {"top_logprobs", std::move(arrays.top)},
                {"text_offset", std::move(arrays.offsets)}};
  };
  // The entries of taken tokens [from, to), their offsets `shift` bytes on.
  auto addTaken = [job, progress, addEntry](LogprobsArrays &arrays, size_t from, size_t to,
                                            size_t shift) {
    std::vector<TokenLogprobs> values = job->logprobsOf(from, to);
    for (size_t i = from; i < from + values.size(); ++i)
      addEntry(arrays, progress->received[i], &values[i - from], shift + progress->offsets[i]);
  };
  // The logprobs of taken tokens [from, to), or null.
  auto logprobsOf = [job, progress, addTaken, logprobsJson](size_t from, size_t to) -> json {
    if (job->logprobs < 0)
      return nullptr;
    LogprobsArrays arrays;
    addTaken(arrays, from, to, 0);
    return logprobsJson(std::move(arrays), progress->text);
  };
  auto choice = [](const std::string &text, std::vector<int32_t> ids, json logprobs, json finish) {
    return json{{"index", 0},
                {"text", text},
                {"token_ids", std::move(ids)},
                {"logprobs", std::move(logprobs)},
                {"finish_reason", std::move(finish)}};
  };
  auto usage = [promptTokens, progress] {
    const int64_t generated = static_cast<int64_t>(progress->used);
    return json{{"prompt_tokens", promptTokens},
                {"completion_tokens", generated},
                {"total_tokens", promptTokens + generated}};
  };
  if (!stream) {
    std::string error;
    while (!progress->complete()) {
      if (!takeToken(&error))
        return errorReply(500, error);
      if (clientGone()) {
        job->cancel();
        return errorReply(499, "the client closed the connection");
      }
    }
    std::string text = progress->text;
    json logprobs = job->echo ? json(nullptr) : logprobsOf(0, progress->used);
    if (job->echo) {
      // The prompt as the model read it (its tokens decoded), each token's
      // offset the length of the tokens before it decoded.
      std::string promptText;
      std::vector<size_t> offsets(job->tokens.size(), 0);
      for (size_t i = 0; tokenizer && i <= job->tokens.size(); ++i) {
        std::string prefix =
            tokenizer->decodeKnown(std::span<const int32_t>(job->tokens.data(), i));
        if (i < offsets.size())
          offsets[i] = prefix.size();
        else
          promptText = std::move(prefix);
      }
      if (job->logprobs >= 0) {
        std::vector<TokenLogprobs> scored = job->promptLogprobs();
        LogprobsArrays arrays;
        for (size_t i = 0; i < job->tokens.size(); ++i)
          addEntry(arrays, job->tokens[i], i > 0 && i <= scored.size() ? &scored[i - 1] : nullptr,
                   offsets[i]);
        addTaken(arrays, 0, progress->used, promptText.size());
        logprobs = logprobsJson(std::move(arrays), promptText + text);
      }
      text = promptText + text;
    }
    Reply reply;
    reply.body = dumpJson(json{
        {"id", id},
        {"object", "text_completion"},
        {"created", created},
        {"model", desc.name},
        {"choices", json::array({choice(text, progress->received, std::move(logprobs), reason())})},
        {"usage", usage()}});
    return reply;
  }
  Reply reply;
  reply.contentType = "text/event-stream";
  reply.cancel = [job] { job->cancel(); };
  reply.stream = [=, this](std::string *event) {
    Progress &p = *progress;
    if (p.finished)
      return false;
    std::string error;
    while (!p.complete() && p.used == p.sentTokens)
      if (!takeToken(&error)) {
        p.finished = true;
        *event =
            "data: " + dumpJson(json{{"error", {{"message", error}, {"type", "server_error"}}}}) +
            "\n\ndata: [DONE]\n\n";
        return true;
      }
    // The text so far, less a tail that may begin a stop string or a
    // character whose bytes are still to come; all of it at the end.
    bool ignored = false;
    size_t upTo = p.complete() ? p.text.size() : sendable(p.text, stops, false, &ignored);
    std::string delta = upTo > p.sentBytes ? p.text.substr(p.sentBytes, upTo - p.sentBytes) : "";
    std::vector<int32_t> ids(p.received.begin() + static_cast<std::ptrdiff_t>(p.sentTokens),
                             p.received.begin() + static_cast<std::ptrdiff_t>(p.used));
    json logprobs = logprobsOf(p.sentTokens, p.used);
    p.sentBytes = std::max(p.sentBytes, upTo);
    p.sentTokens = p.used;
    json chunk{{"id", id},
               {"object", "text_completion"},
               {"created", created},
               {"model", desc.name},
               {"choices", json::array({choice(delta, std::move(ids), std::move(logprobs),
                                               p.complete() ? json(reason()) : json(nullptr))})}};
    if (p.complete()) {
      chunk["usage"] = usage();
      p.finished = true;
    }
    *event = "data: " + dumpJson(chunk) + "\n\n" + (p.finished ? "data: [DONE]\n\n" : "");
    return true;
  };
  return reply;
}

Reply Routes::encode(const std::string &body, bool classify,
                     const std::function<bool()> &clientGone) {
  const std::string kind = desc.output_kind;
  if (classify ? kind != "classes" : kind != "hidden")
    return errorReply(404, std::string("model '") + desc.name + "' returns " + kind + ": " +
                               (classify ? "/v1/classify needs a classifier head"
                                         : "/v1/embeddings needs hidden-state outputs") +
                               (kind == "logits" ? " (it answers /v1/completions)" : ""));
  if (desc.encoder_decoder)
    return errorReply(404, "an encoder-decoder model is not served");
  json request = parseBody(body);
  if (classify)
    checkFields(request, "/v1/classify", {"model", "input", "user"});
  else
    checkFields(request, "/v1/embeddings",
                {"model", "input", "user", "pooling", "encoding_format", "dimensions"});
  if (!request.contains("input"))
    throw BadField{"input", "input is required"};
  const json &input = request["input"];
  // One input (a string or ids) or a list of them.
  std::vector<json> inputs;
  bool many = input.is_array() && !input.empty() && (input[0].is_string() || input[0].is_array());
  if (many)
    inputs.assign(input.begin(), input.end());
  else
    inputs.push_back(input);
  if (static_cast<int64_t>(inputs.size()) > limits.maxInputs)
    throw BadField{"input", "input has " + std::to_string(inputs.size()) + " items; at most " +
                                std::to_string(limits.maxInputs)};
  std::string pooling = "mean";
  if (auto it = request.find("pooling"); !classify && it != request.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "mean" && *it != "cls" && *it != "last" && *it != "none"))
      throw BadField{"pooling", "pooling must be \"mean\", \"cls\", \"last\" or \"none\""};
    pooling = it->get<std::string>();
  }
  bool base64 = false;
  if (auto it = request.find("encoding_format");
      !classify && it != request.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "float" && *it != "base64"))
      throw BadField{"encoding_format", "encoding_format must be \"float\" or \"base64\""};
    base64 = *it == "base64";
  }
  if (auto it = request.find("dimensions");
      !classify && it != request.end() && !it->is_null() && *it != desc.output_width)
    throw BadField{"dimensions", "dimensions " + shown(*it) + ": this model's embeddings have " +
                                     std::to_string(desc.output_width) +
                                     " values (shortening them is not supported)"};
  std::vector<std::shared_ptr<Job>> jobs;
  int64_t tokens = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto job = std::make_shared<Job>();
    job->kind = Job::Kind::Encode;
    std::string param = many ? "input[" + std::to_string(i) + "]" : "input";
    job->tokens = tokensOf(inputs[i], param.c_str(), desc, tokenizer);
    tokens += static_cast<int64_t>(job->tokens.size());
    jobs.push_back(std::move(job));
  }
  for (auto &job : jobs) {
    std::string why;
    if (!engine.submit(job, &why)) {
      for (auto &submitted : jobs)
        submitted->cancel();
      return errorReply(503, why);
    }
  }
  json data = json::array();
  const int64_t width = desc.output_width;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::vector<int32_t> none;
    for (bool done = false; !done;) {
      jobs[i]->wait(0, &none, &done, kPoll);
      if (!done && clientGone()) {
        for (auto &job : jobs)
          job->cancel();
        return errorReply(499, "the client closed the connection");
      }
    }
    if (jobs[i]->finishReason() != "stop")
      return errorReply(500, "input " + std::to_string(i) + ": " + jobs[i]->error());
    std::vector<float> rows = jobs[i]->output();
    const int64_t count = static_cast<int64_t>(rows.size()) / width;
    auto row = [&](int64_t r) {
      return std::vector<float>(rows.begin() + r * width, rows.begin() + (r + 1) * width);
    };
    json item{{"index", i}};
    if (classify) {
      std::vector<float> logits = row(0);
      item["logits"] = logits;
      item["label"] = std::max_element(logits.begin(), logits.end()) - logits.begin();
    } else if (pooling == "none") {
      json perToken = json::array();
      for (int64_t r = 0; r < count; ++r)
        perToken.push_back(base64 ? json(base64Floats(row(r))) : json(row(r)));
      item["object"] = "embedding";
      item["embedding"] = std::move(perToken);
    } else {
      std::vector<float> pooled;
      if (pooling == "mean") {
        // Summed in double, in row order, then rounded once.
        std::vector<double> sum(static_cast<size_t>(width), 0.0);
        for (int64_t r = 0; r < count; ++r)
          for (int64_t c = 0; c < width; ++c)
            sum[static_cast<size_t>(c)] += rows[static_cast<size_t>(r * width + c)];
        for (double s : sum)
          pooled.push_back(static_cast<float>(s / static_cast<double>(count)));
      } else {
        pooled = row(pooling == "cls" ? 0 : count - 1);
      }
      item["object"] = "embedding";
      item["embedding"] = base64 ? json(base64Floats(pooled)) : json(std::move(pooled));
    }
    data.push_back(std::move(item));
  }
  Reply reply;
  reply.body = dumpJson(json{{"object", "list"},
                             {"model", desc.name},
                             {"data", std::move(data)},
                             {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
  return reply;
}

} // namespace tmr::serve
