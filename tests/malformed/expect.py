#!/usr/bin/env python3
"""Runs one command that is given bad input and checks it fails well.

    expect.py STATUS REGEX [--stdout REGEX] [--absent PATH]... [--timeout S] -- CMD ARG...

Passes only when CMD
  - ends by itself within the timeout (no hang) and by exit(), not a signal
    (no crash, no abort, no core dump);
  - exits with exactly STATUS (1: bad file or failed run, 2: bad command line;
    0 for cases that only warn);
  - prints something on stderr matching REGEX (Python re, searched), which
    names the culprit: file:line:col, the tensor, or the flag and its range;
  - prints no sanitizer report (ASan, LSan, UBSan);
  - prints nothing on stdout unless --stdout gives what it may print (no
    partial output), and leaves no PATH of --absent behind, nor a temporary
    sibling of it (PATH.tmp-*).
"""
import glob
import os
import re
import subprocess
import sys

SANITIZER_REPORTS = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: UndefinedBehaviorSanitizer")


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.exit(__doc__)
    split = argv.index("--")
    options, command = argv[1:split], argv[split + 1:]
    status, pattern = int(options[0]), options[1]
    stdout_pattern, absent, timeout = None, [], 120.0
    rest = options[2:]
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--stdout":
            stdout_pattern = value
        elif flag == "--absent":
            absent.append(value)
        elif flag == "--timeout":
            timeout = float(value)
        else:
            sys.exit("expect.py: unknown option " + flag)

    # Sanitizer builds run 3-5x slower, and CI runs their suites side by
    # side on two cores: lit.cfg.py scales every limit there, so a hang is
    # still a hang (the limits are minutes against seconds of work) but a slow
    # instrumented run is not taken for one.
    timeout *= float(os.environ.get("TMC_EXPECT_TIMEOUT_SCALE", "1"))
    shown = " ".join(command)
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit("FAIL (hang): %s did not finish in %g s" % (shown, timeout))
    out = done.stdout.decode("utf-8", "replace")
    err = done.stderr.decode("utf-8", "replace")
    problems = []
    if done.returncode < 0:
        problems.append("killed by signal %d (a crash)" % -done.returncode)
    elif done.returncode != status:
        problems.append("exit status %d, expected %d" % (done.returncode, status))
    if SANITIZER_REPORTS.search(err):
        problems.append("a sanitizer reported a problem")
    if not re.search(pattern, err, re.MULTILINE):
        problems.append("stderr does not match %r" % pattern)
    if stdout_pattern is None and out:
        problems.append("unexpected output on stdout")
    if stdout_pattern is not None and not re.search(stdout_pattern, out, re.MULTILINE):
        problems.append("stdout does not match %r" % stdout_pattern)
    for path in absent:
        left = ([path] if os.path.lexists(path) else []) + glob.glob(glob.escape(path) + ".tmp-*")
        if left:
            problems.append("left behind: " + ", ".join(left))
    if problems:
        sys.exit("FAIL: %s\n  %s\n--- stdout ---\n%s--- stderr ---\n%s" %
                 (shown, "\n  ".join(problems), out, err))


if __name__ == "__main__":
    main(sys.argv)
