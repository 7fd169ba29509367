# An unknown key is located and the closest known key is offered, both under
# the caret (as a fix-it) and as a note.
# Each misspelling stands for its key: no "missing required key" on top.
# RUN: not %tmc check %s 2>&1 \
# RUN:   | FileCheck --strict-whitespace --implicit-check-not='missing required key' %s

model m {
  vocab = 100
# CHECK: {{.*}}unknown-key.tm:[[@LINE+5]]:3: error: unknown key 'd_modle'
# CHECK-NEXT: {{^}}  d_modle = 64
# CHECK-NEXT: {{^}}  ^~~~~~~
# CHECK-NEXT: {{^}}  d_model
# CHECK-NEXT: {{^}}note: did you mean 'd_model'?
  d_modle = 64
  max_seq = 64
  encoder {
    layers = 1
# CHECK: {{.*}}unknown-key.tm:[[@LINE+3]]:5: error: unknown key 'hedas'
# CHECK-NEXT: {{^}}    hedas = 1
# CHECK: {{^}}note: did you mean 'heads'?
    hedas = 1
  }
}
