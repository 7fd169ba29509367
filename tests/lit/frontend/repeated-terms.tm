# A second global or random term in one mask is not supported yet: `tmc check`
# says so (rather than passing a spec `tmc compile` would refuse), with a note
# at the first term.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}repeated-terms.tm:[[@LINE+6]]:35: error: a mask with two 'global' terms is not supported yet by this version of tmc
# CHECK-NEXT: {{^}}    mask = global(tokens = [0]) + global(tokens = [3])
# CHECK-NEXT: {{^}}                                  ^~~~~~
# CHECK-NEXT: {{^}}note: list every token in one global term
# CHECK-NEXT: {{.*}}repeated-terms.tm:[[@LINE+2]]:12: note: first given here
# CHECK-NOT: error
    mask = global(tokens = [0]) + global(tokens = [3])
# CHECK: {{.*}}repeated-terms.tm:[[@LINE+2]]:58: error: a mask with two 'random' terms is not supported yet by this version of tmc
# CHECK-NEXT: {{^}}    layers 1..1 { mask = random(per_row = 2) + padding + random(per_row = 1, seed = 3) }
    layers 1..1 { mask = random(per_row = 2) + padding + random(per_row = 1, seed = 3) }
  }
}
