# `weights = canonical | huggingface(FAMILY)` names the layout of the weights
# the executable reads; a family it does not know, or none, is an error at
# the value, and the check's summary says which scheme a model reads.
# RUN: not %tmc check %s 2>&1 | FileCheck %s
# RUN: %tmc check %S/Inputs/weights-huggingface.tm | FileCheck %s --check-prefix=SUMMARY
# SUMMARY: dtype f32, weights huggingface(llama)
# `tmc manifest` says where the checkpoint holds each tensor (the prefix in
# brackets: only a checkpoint with a head has it).
# RUN: %tmc manifest %S/Inputs/weights-huggingface.tm | FileCheck %s --check-prefix=MANIFEST
# MANIFEST: embed.tokens [100, 64] F32  <- [model.]embed_tokens.weight
# MANIFEST-NEXT: decoder.layers.0.self_attn.q.weight [64, 64] F32  <- [model.]layers.0.self_attn.q_proj.weight
# MANIFEST: decoder.final_norm.weight [64] F32  <- [model.]norm.weight
# RUN: %tmc manifest --json %S/Inputs/weights-huggingface.tm | FileCheck %s --check-prefix=MANIFEST-JSON
# MANIFEST-JSON: "checkpoint": "[model.]embed_tokens.weight",
# RUN: not %tmc check %S/Inputs/weights-no-family.tm 2>&1 | FileCheck %s --check-prefix=NO-FAMILY
# NO-FAMILY: weights-no-family.tm:5:12: error: huggingface() needs the checkpoint's family
# NO-FAMILY: note: write huggingface(gpt2), huggingface(bert) or huggingface(llama)

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}weights-scheme.tm:[[@LINE+1]]:25: error: unknown value 'gpt3' for 'family'; expected one of gpt2, bert, llama
  weights = huggingface(gpt3)
  decoder {
    layers = 1
    heads = 4
  }
}
