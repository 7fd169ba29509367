//===- model.cpp - A compiled model with its weights loaded ---------------===//

#include "runtime/model.h"

#include "runtime/half.h"
#include "runtime/hf_checkpoint.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tmr {

namespace {

/// Tells an unreadable file (TMR_ERROR_IO) from an unparsable one before the
/// safetensors reader, whose messages do not distinguish them, sees it.
bool checkReadable(const std::string &path, std::string *error) {
  // O_NONBLOCK: a FIFO would otherwise block the open until a writer comes.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat info {};
  bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  ::close(fd);
  if (!regular)
    *error = path + ": not a regular file";
  return regular;
}

bool pathExists(const std::string &path, std::string *error) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0)
    return true;
  *error = path + ": cannot open: " + std::strerror(errno);
  return false;
}

/// The whole pages inside [data, data + bytes): the ones no other tensor shares.
void dropPages(const void *data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  // A private read-only file mapping: dropped pages read back from the file
  // if touched again, so this only ever costs time, never correctness.
  if (end > begin)
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

} // namespace

bool checkCompiledModel(const tmr_model_desc *desc, std::string *error) {
  if (!desc) {
    *error = "no compiled model (its description is null)";
    return false;
  }
  if (desc->abi_version != TMR_ABI_VERSION) {
    *error = "the model was compiled for runtime ABI version " + std::to_string(desc->abi_version) +
             ", this runtime implements version " + std::to_string(TMR_ABI_VERSION) +
             "; recompile it with a matching tmc";
    return false;
  }
  bool ok = desc->run && (desc->prepare == nullptr) == (desc->release == nullptr) &&
            desc->vocab > 0 && desc->vocab - 1 <= std::numeric_limits<int32_t>::max() &&
            desc->max_seq > 0 && desc->output_width > 0 && desc->num_tensors >= 0 &&
            desc->output_rows >= 0 && desc->cache_bytes >= 0 && desc->segments >= 0 &&
            desc->arena_floats >= 0 && desc->prepared_floats >= 0 && desc->d_model >= 0 &&
            desc->layers >= 0 && (desc->encoder_decoder == 0 || desc->encoder_decoder == 1) &&
            (desc->num_tensors == 0 || desc->tensors) && desc->output_kind &&
            desc->max_seq <= std::numeric_limits<int64_t>::max() / desc->output_width;
  if (!ok)
    *error = "the compiled model's description is inconsistent (a field out of range); "
             "recompile it with a matching tmc";
  return ok;
}

std::unique_ptr<Model> Model::open(const tmr_model_desc *desc, const std::string &path,
                                   int32_t threads, tmr_status *status, std::string *error) {
  auto fail = [&](tmr_status code) {
    *status = code;
    return nullptr;
  };
  if (!checkCompiledModel(desc, error))
    return fail(TMR_ERROR_ABI);
  const bool checkpoint = desc->weight_scheme && *desc->weight_scheme;
  // A Hugging Face checkpoint may be a folder; its files are checked as
  // openWeights finds them.
  if (!checkpoint && !checkReadable(path, error))
    return fail(TMR_ERROR_IO);
  if (checkpoint && !pathExists(path, error))
    return fail(TMR_ERROR_IO);
  std::unique_ptr<Model> model(new Model(desc));
  // Guarded: runs read weights in place long after this, and a truncation
  // of the file then must fail the run, not kill the process.
  model->file_ = openWeights(path, desc->weight_scheme, desc->tensors, desc->num_tensors, error,
                             /*guardTruncation=*/true);
  if (!model->file_)
    return fail(TMR_ERROR_BAD_WEIGHTS);
  if (!checkTensors(*model->file_, path, desc->tensors, desc->num_tensors, error))
    return fail(TMR_ERROR_BAD_WEIGHTS);
  // NaN or Inf weights load (a model may mean them) but are worth a word.
  // The scan faults every weight page in; packing below reads each raw
  // weight once more and drops it, so drop them here too rather than hold
  // the whole file resident beside the packed copies.
  model->warnings_ = nonFiniteWarnings(*model->file_, path);
  for (std::string &warning :
       q4OverflowWarnings(*model->file_, path, desc->tensors, desc->num_tensors))
    model->warnings_.push_back(std::move(warning));
  for (int32_t i = 0; i < desc->num_tensors; ++i) {
    const TensorView *tensor = model->file_->find(desc->tensors[i].name);
    if (model->file_->isMapped(tensor->data))
      dropPages(tensor->data, tensor->bytes);
  }

  // Kernels compute in f32: f16 and bf16 weights are widened once, here, and
  // their narrow pages in the mapping are not needed again.
  // Pre-quantized weights (I8, U8) are packed from their values and scales
  // as they are.
  size_t count = static_cast<size_t>(desc->num_tensors);
  model->widened_.resize(count);
  model->dropped_.assign(count, false);
  model->scales_.assign(count, nullptr);
  bool quantized = false;
  for (size_t i = 0; i < count; ++i) {
    const TensorView *tensor = model->file_->find(desc->tensors[i].name);
    if (tensor->dtype == TMR_F32) {
      model->pointers_.push_back(tensor->data);
      continue;
    }
    if (tensor->dtype == TMR_I8 || tensor->dtype == TMR_U8) {
      model->pointers_.push_back(tensor->data);
      model->scales_[i] = model->file_->find(std::string(desc->tensors[i].name) + ".scale")->data;
      quantized = true;
      continue;
    }
    model->widened_[i] =
        widenToF32(tensor->data, tensor->bytes / dtypeSize(tensor->dtype), tensor->dtype);
    model->pointers_.push_back(model->widened_[i].data());
    if (model->file_->isMapped(tensor->data))
      dropPages(tensor->data, tensor->bytes);
  }

  // The model lays its weights out for its kernels once (packing), dropping
  // each raw weight it will not read again as it goes.
  if (desc->prepare) {
    char message[1024] = {0};
    if (desc->prepare(model->pointers_.data(), quantized ? model->scales_.data() : nullptr, threads,
                      &Model::weightDone, model.get(), &model->prepared_, message,
                      sizeof message) != 0) {
      message[sizeof message - 1] = '\0';
      if (model->file_->lost()) {
        *error = model->file_->lostMessage();
        return fail(TMR_ERROR_IO);
      }
      // A CUDA executable on a machine without a GPU: the weights are fine,
      // the machine is not; say only that.
      const char *cuda = std::strstr(message, "this executable was compiled for CUDA");
      *error = cuda ? std::string(cuda)
                    : path + ": preparing the weights failed: " +
                          (message[0] ? message : "no message");
      model->prepared_ = nullptr;
      return fail(std::strstr(message, "out of memory") ? TMR_ERROR_OUT_OF_MEMORY
                                                         : TMR_ERROR_MODEL);
    }
  }
  // The file shrank while it was being widened or packed: what was read from
  // there on were zeros (mapping_guard.h), not its weights.
  if (model->file_->lost()) {
    *error = model->file_->lostMessage();
    return fail(TMR_ERROR_IO);
  }
  *status = TMR_OK;
  return model;
}

Model::~Model() {
  if (prepared_ && desc_->release)
    desc_->release(prepared_);
}

void Model::weightDone(void *self, int32_t index, int32_t stillRead) {
  static_cast<Model *>(self)->dropRaw(index, stillRead != 0);
}

void Model::dropRaw(int32_t index, bool stillRead) {
  if (index < 0 || static_cast<size_t>(index) >= pointers_.size() || dropped_[index])
    return;
  const TensorView *tensor = file_->find(desc_->tensors[index].name);
  if (stillRead) {
    // Runs read some rows: the mapping gives back just those, on demand.
    if (widened_[index].empty() && file_->isMapped(tensor->data))
      dropPages(tensor->data, tensor->bytes);
    return;
  }
  dropped_[index] = true;
  if (!widened_[index].empty()) {
    AlignedVector<float>().swap(widened_[index]);
  } else if (file_->isMapped(tensor->data)) {
    dropPages(tensor->data, tensor->bytes);
  } else {
    // A copy (a misaligned tensor's, or one converted from a Hugging Face
    // layout, hf_checkpoint.h): freed, as a widened one is.
    file_->releaseCopy(tensor->data, tensor->bytes);
  }
  // Runs never read it (only its packed copy); null makes a mistake loud.
  pointers_[index] = nullptr;
}

int64_t Model::weightBytes() const {
  int64_t bytes = desc_->prepared_floats * static_cast<int64_t>(sizeof(float));
  for (int32_t i = 0; i < desc_->num_tensors; ++i) {
    if (dropped_[i])
      continue;
    int64_t elements = 1;
    for (int32_t d = 0; d < desc_->tensors[i].rank; ++d)
      elements *= desc_->tensors[i].shape[d];
    bytes += elements * static_cast<int64_t>(sizeof(float));
  }
  return bytes;
}

} // namespace tmr
