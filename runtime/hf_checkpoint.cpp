//===- hf_checkpoint.cpp - Hugging Face checkpoints under tmc's names ------===//

#include "runtime/hf_checkpoint.h"

#include "runtime/half.h"
#include "runtime/hf_names.h"
#include "runtime/message_text.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sys/stat.h>

namespace tmr {

namespace {

using Json = nlohmann::json;

/// More would bury the first; checkTensors stops at the same count.
constexpr size_t kMaxProblems = 20;

bool isDirectory(const std::string &path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool exists(const std::string &path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

std::string parentOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

/// The checkpoint's files, opened: one, or the shards an index lists.
struct Checkpoint {
  std::string displayName; ///< the file, or the index, that errors name
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  /// Every tensor of every file: the view and the file it lies in.
  std::map<std::string, std::pair<const TensorView *, const SafetensorsFile *>, std::less<>>
      tensors;
  std::map<std::string, std::pair<const OtherTensor *, const SafetensorsFile *>, std::less<>>
      others;
};

bool addFile(Checkpoint &checkpoint, std::unique_ptr<SafetensorsFile> file, std::string *error) {
  for (const TensorView &view : file->tensors())
    if (!checkpoint.tensors.emplace(view.name, std::make_pair(&view, file.get())).second) {
      *error = checkpoint.displayName + ": tensor " + tmr::quoted(view.name) + " is in both " +
               checkpoint.tensors[view.name].second->path() + " and " + file->path();
      return false;
    }
  for (const OtherTensor &other : file->otherTensors())
    checkpoint.others.emplace(other.name, std::make_pair(&other, file.get()));
  checkpoint.files.push_back(std::move(file));
  return true;
}

/// A sharded checkpoint: model.safetensors.index.json's "weight_map" names,
/// for each tensor, the file in the same folder that holds it.
bool openIndex(Checkpoint &checkpoint, const std::string &indexPath, bool guard,
               std::string *error) {
  auto fail = [&](const std::string &message) {
    *error = indexPath + ": " + message;
    return false;
  };
  // A FIFO would block the open until a writer came.
  struct stat info {};
  if (::stat(indexPath.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return fail("not a regular file");
  std::ifstream in(indexPath);
  if (!in)
    return fail(std::string("cannot open: ") + std::strerror(errno));
  Json index = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object())
    return fail("not a JSON object");
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    return fail("no \"weight_map\" object (tensor name -> shard file)");
  const std::string folder = parentOf(indexPath);
  std::set<std::string> shards;
  for (const auto &[tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string())
      return fail("\"weight_map\" entry " + tmr::quoted(tensor) + " is not a file name");
    std::string name = shard.get<std::string>();
    // Shards lie beside the index: a path elsewhere is not a checkpoint's.
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      return fail("\"weight_map\" entry " + tmr::quoted(tensor) + " names " + tmr::quoted(name) +
                  ", not a file in the index's folder");
    shards.insert(name);
  }
  if (shards.empty())
    return fail("\"weight_map\" lists no tensors");
  for (const std::string &shard : shards) {
    const std::string path = folder + "/" + shard;
    if (!exists(path))
      return fail("\"weight_map\" names shard " + tmr::quoted(shard) + ", which does not exist (" +
                  path + ")");
    std::unique_ptr<SafetensorsFile> file = SafetensorsFile::open(path, error, guard, true);
    if (!file || !addFile(checkpoint, std::move(file), error))
      return false;
  }
  for (const auto &[tensor, shard] : index["weight_map"].items()) {
    auto it = checkpoint.tensors.find(tensor);
    bool found = it != checkpoint.tensors.end() || checkpoint.others.count(tensor);
    if (!found)
      return fail("\"weight_map\" places tensor " + tmr::quoted(tensor) + " in " +
                  shard.get<std::string>() + ", which does not hold it");
  }
  return true;
}

bool openCheckpoint(Checkpoint &checkpoint, const std::string &path, bool guard,
                    std::string *error) {
  std::string file = path;
  if (isDirectory(path)) {
    const std::string index = path + "/model.safetensors.index.json";
    const std::string single = path + "/model.safetensors";
    if (exists(index)) {
      checkpoint.displayName = index;
      return openIndex(checkpoint, index, guard, error);
    }
    if (!exists(single)) {
      *error = path + ": a Hugging Face checkpoint folder holds model.safetensors or "
                      "model.safetensors.index.json, and this one has neither";
      return false;
    }
    file = single;
  } else if (path.size() > 5 && path.substr(path.size() - 5) == ".json") {
    checkpoint.displayName = path;
    return openIndex(checkpoint, path, guard, error);
  }
  checkpoint.displayName = file;
  std::unique_ptr<SafetensorsFile> opened = SafetensorsFile::open(file, error, guard, true);
  return opened && addFile(checkpoint, std::move(opened), error);
}

float readAsFloat(const void *data, tmr_dtype dtype, size_t i) {
  switch (dtype) {
  case TMR_F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case TMR_BF16:
    return bfloat16ToFloat(static_cast<const uint16_t *>(data)[i]);
  default:
    return static_cast<const float *>(data)[i];
  }
}

void writeFromFloat(void *data, tmr_dtype dtype, size_t i, float value) {
  switch (dtype) {
  case TMR_F16:
    static_cast<uint16_t *>(data)[i] = floatToHalf(value);
    break;
  case TMR_BF16:
    static_cast<uint16_t *>(data)[i] = floatToBfloat16(value);
    break;
  default:
    static_cast<float *>(data)[i] = value;
  }
}

/// Reads the checkpoint's tensors as tmc's names and layouts say.
class Mapper {
public:
  Mapper(Checkpoint &checkpoint, const hf::Family &family, const tmr_tensor_desc *expected,
         int32_t count)
      : checkpoint(checkpoint), family(family), expected(expected), count(count) {}

  std::unique_ptr<SafetensorsFile> run(std::string *error) {
    choosePrefix();
    // Not this family's checkpoint at all (tmc's canonical names, another
    // family): one line says so, rather than every tensor missing.
    if (!checkpoint.tensors.count(prefix + family.tokenTable)) {
      *error = checkpoint.displayName + ": no tensor " + tmr::quoted(family.tokenTable) + " or " +
               tmr::quoted(std::string(family.prefix) + family.tokenTable) +
               ": not a Hugging Face " + family.name + " checkpoint, which the model reads (" +
               scheme() + " in its spec)";
      return nullptr;
    }
    hasClassifier = false;
    for (int32_t i = 0; i < count; ++i)
      hasClassifier |= std::string_view(expected[i].name) == "classifier.weight";
    for (int32_t i = 0; i < count && problems.size() < kMaxProblems; ++i)
      mapTensor(expected[i]);
    checkLeftovers();
    if (!problems.empty()) {
      std::string text;
      for (size_t i = 0; i < problems.size() && i < kMaxProblems; ++i)
        text += (i ? "\n" : "") + problems[i];
      *error = text;
      return nullptr;
    }
    return SafetensorsFile::assemble(checkpoint.displayName, std::move(checkpoint.files),
                                     std::move(views), std::move(storage));
  }

private:
  std::string scheme() const { return std::string("huggingface(") + family.name + ")"; }

  /// A checkpoint with a head (GPT2LMHeadModel) nests the base model under a
  /// prefix; one without (GPT2Model) does not.
  void choosePrefix() {
    std::string prefixed = std::string(family.prefix) + family.tokenTable;
    prefix = checkpoint.tensors.count(prefixed) || checkpoint.others.count(prefixed) ? family.prefix
                                                                                     : "";
  }

  std::string fullName(const hf::Source &source, const std::string &name) const {
    return (source.prefixed ? prefix : std::string()) + name;
  }

  void mapTensor(const tmr_tensor_desc &desc) {
    std::optional<hf::Source> source = family.source(desc.name);
    if (!source) {
      problems.push_back(checkpoint.displayName + ": " + scheme() + " has no tensor for tmc's " +
                         tmr::quoted(desc.name) +
                         ": this model reads a tensor the family does not have");
      return;
    }
    const TensorView *found = nullptr;
    const SafetensorsFile *file = nullptr;
    std::string name;
    for (const std::string &candidate : source->names) {
      name = fullName(*source, candidate);
      if (auto it = checkpoint.tensors.find(name); it != checkpoint.tensors.end()) {
        std::tie(found, file) = it->second;
        break;
      }
      if (auto it = checkpoint.others.find(name); it != checkpoint.others.end()) {
        problems.push_back(it->second.second->path() + ": tensor " + tmr::quoted(name) +
                           " has dtype " + it->second.first->dtype + ", which tmc cannot read as " +
                           tmr::quoted(desc.name) + " (F32, F16 or BF16)");
        used.insert(name);
        return;
      }
    }
    std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
    if (!found) {
      if (source->zerosIfAbsent) {
        addZeros(desc, shape);
        return;
      }
      // GPT-2's q, k and v share one tensor: say it is missing once.
      if (!missing.insert(fullName(*source, source->names.front())).second)
        return;
      problems.push_back(checkpoint.displayName + ": missing tensor " +
                         tmr::quoted(fullName(*source, source->names.front())) + " (" + scheme() +
                         "), which tmc reads as " + tmr::quoted(desc.name) + " " +
                         dtypeName(desc.dtype) + " " + formatShape(shape));
      return;
    }
    used.insert(name);
    convert(desc, shape, *source, *found, *file);
  }

  void addZeros(const tmr_tensor_desc &desc, const std::vector<int64_t> &shape) {
    size_t elements = 1;
    for (int64_t d : shape)
      elements *= static_cast<size_t>(d);
    AlignedVector<unsigned char> zeros(elements * dtypeSize(desc.dtype), 0);
    addView(desc, shape, zeros.data(), zeros.size());
    storage.push_back(std::move(zeros));
  }

  void addView(const tmr_tensor_desc &desc, const std::vector<int64_t> &shape, const void *data,
               size_t bytes) {
    TensorView view;
    view.name = desc.name;
    view.dtype = desc.dtype;
    view.shape = shape;
    view.data = data;
    view.bytes = bytes;
    views.push_back(std::move(view));
  }

  /// The checkpoint's shape that holds `shape` as `source` says.
  static std::vector<int64_t> storedShape(std::vector<int64_t> shape, const hf::Source &source) {
    if (!shape.empty())
      shape[0] *= source.parts;
    if (source.transposed && shape.size() == 2)
      std::swap(shape[0], shape[1]);
    return shape;
  }

  void convert(const tmr_tensor_desc &desc, const std::vector<int64_t> &shape,
               const hf::Source &source, const TensorView &tensor, const SafetensorsFile &file) {
    std::vector<int64_t> want = storedShape(shape, source);
    bool fits = tensor.shape == want;
    // A longer position table: its leading rows are the model's.
    if (!fits && source.leadingRows && tensor.shape.size() == want.size() && !want.empty() &&
        tensor.shape[0] >= want[0])
      fits = std::equal(want.begin() + 1, want.end(), tensor.shape.begin() + 1);
    const std::string what = file.path() + ": tensor " + tmr::quoted(tensor.name) + " (" +
                             scheme() + ", tmc's " + tmr::quoted(desc.name) + ")";
    if (!fits) {
      problems.push_back(what + " has shape " + formatShape(tensor.shape) + ", expected " +
                         formatShape(want) +
                         (source.leadingRows ? " (or more rows)" : std::string()));
      return;
    }
    // A checkpoint's weights are floats; I8 and U8 are tmc quantize's
    // formats, which only a file with tmc's names holds.
    if (tensor.dtype != TMR_F32 && tensor.dtype != TMR_F16 && tensor.dtype != TMR_BF16) {
      problems.push_back(what + " has dtype " + dtypeName(tensor.dtype) +
                         ", expected F32, F16 or BF16");
      return;
    }
    // Widening is exact; narrowing would change the checkpoint's values.
    if (tensor.dtype != desc.dtype && desc.dtype != TMR_F32) {
      problems.push_back(what + " has dtype " + dtypeName(tensor.dtype) +
                         ", but the model stores " + dtypeName(desc.dtype) + ": write dtype = " +
                         (tensor.dtype == TMR_F32   ? "f32"
                          : tensor.dtype == TMR_F16 ? "f16"
                                                    : "bf16") +
                         " in the spec");
      return;
    }
    size_t elements = 1;
    for (int64_t d : shape)
      elements *= static_cast<size_t>(d);
    const size_t first = static_cast<size_t>(source.part) * elements;
    const unsigned char *inPlace =
        static_cast<const unsigned char *>(tensor.data) + first * dtypeSize(tensor.dtype);
    // Rows [part * n, (part + 1) * n) are contiguous: read them in place
    // where they are aligned as kernels load them (aligned.h).
    if (!source.transposed && tensor.dtype == desc.dtype && isAligned(inPlace)) {
      addView(desc, shape, inPlace, elements * dtypeSize(desc.dtype));
      return;
    }
    AlignedVector<unsigned char> out(elements * dtypeSize(desc.dtype));
    if (source.transposed && shape.size() == 2) {
      // Stored [in, parts * out]: element (o, i) of part p is at
      // i * (parts * out) + p * out + o.
      const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
      const size_t stride = rows * static_cast<size_t>(source.parts);
      const size_t offset = static_cast<size_t>(source.part) * rows;
      for (size_t o = 0; o < rows; ++o)
        for (size_t i = 0; i < cols; ++i)
          writeFromFloat(out.data(), desc.dtype, o * cols + i,
                         readAsFloat(tensor.data, tensor.dtype, i * stride + offset + o));
    } else {
      for (size_t k = 0; k < elements; ++k)
        writeFromFloat(out.data(), desc.dtype, k,
                       readAsFloat(tensor.data, tensor.dtype, first + k));
    }
    addView(desc, shape, out.data(), out.size());
    storage.push_back(std::move(out));
  }

  /// Tensors the model does not read: buffers and unused heads may stay;
  /// anything else means the spec and the checkpoint disagree (a layer more,
  /// a bias the spec leaves out).
  void checkLeftovers() {
    const std::string tokens = prefix + family.tokenTable;
    auto describe = [&](const std::string &name, const SafetensorsFile &file) {
      return file.path() + ": unexpected tensor " + tmr::quoted(name) + ": " + scheme() +
             " maps it to no tensor of this model (`tmc manifest` lists what it reads)" +
             (name.find("pooler.") != std::string::npos
                  ? "; a classifier reads BERT's pooler with classifier(pooler = true)"
                  : "");
    };
    auto ignorable = [&](const std::string &name) {
      std::string_view bare = name;
      if (!prefix.empty() && bare.substr(0, prefix.size()) == prefix)
        bare.remove_prefix(prefix.size());
      return family.ignorable(bare, hasClassifier);
    };
    for (const auto &[name, where] : checkpoint.tensors) {
      if (used.count(name) || ignorable(name) || problems.size() >= kMaxProblems)
        continue;
      if (name == "lm_head.weight") {
        // save_pretrained usually drops a tied head; one kept must be the
        // token table itself, or the spec's tied head would be wrong.
        auto table = checkpoint.tensors.find(tokens);
        const TensorView &head = *where.first;
        if (table != checkpoint.tensors.end() && table->second.first->shape == head.shape &&
            table->second.first->dtype == head.dtype &&
            std::memcmp(table->second.first->data, head.data, head.bytes) == 0)
          continue;
        problems.push_back(where.second->path() +
                           ": tensor 'lm_head.weight' is the checkpoint's "
                           "own LM head, not a copy of " +
                           tmr::quoted(tokens) +
                           ", but the model ties its head to the token table: write "
                           "output = lm_head(tied = false)");
        continue;
      }
      problems.push_back(describe(name, *where.second));
    }
    for (const auto &[name, where] : checkpoint.others)
      if (!used.count(name) && !ignorable(name) && problems.size() < kMaxProblems)
        problems.push_back(describe(name, *where.second));
  }

  Checkpoint &checkpoint;
  const hf::Family &family;
  const tmr_tensor_desc *expected;
  int32_t count;
  std::string prefix;
  bool hasClassifier = false;
  std::set<std::string, std::less<>> used, missing;
  std::vector<TensorView> views;
  std::vector<AlignedVector<unsigned char>> storage;
  std::vector<std::string> problems;
};

} // namespace

bool isWeightScheme(std::string_view family) { return hf::findFamily(family) != nullptr; }

std::unique_ptr<SafetensorsFile> openWeights(const std::string &path, const char *scheme,
                                             const tmr_tensor_desc *expected, int32_t count,
                                             std::string *error, bool guardTruncation) {
  if (!scheme || !*scheme)
    return SafetensorsFile::open(path, error, guardTruncation);
  const hf::Family *family = hf::findFamily(scheme);
  if (!family) {
    *error = std::string("the model names weight scheme ") + tmr::quoted(scheme) +
             ", which this runtime does not know; recompile it with a matching tmc";
    return nullptr;
  }
  Checkpoint checkpoint;
  if (!openCheckpoint(checkpoint, path, guardTruncation, error))
    return nullptr;
  // A file with tmc's canonical names (one `tmc quantize` wrote) is read as
  // it is: the scheme says where a checkpoint's tensors are, not that only a
  // checkpoint will do.
  const bool canonical =
      checkpoint.files.size() == 1 && count > 0 && checkpoint.files.front()->find(expected[0].name);
  if (canonical) {
    if (!checkpoint.files.front()->otherTensors().empty()) {
      const OtherTensor &other = checkpoint.files.front()->otherTensors().front();
      *error = checkpoint.displayName + ": tensor " + tmr::quoted(other.name) +
               " has unsupported dtype " + other.dtype + " (supported: F32, F16, BF16, I8, U8)";
      return nullptr;
    }
    return std::move(checkpoint.files.front());
  }
  return Mapper(checkpoint, *family, expected, count).run(error);
}

} // namespace tmr
