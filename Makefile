# The two commands a newcomer runs first: `make demo` and `make test`.
# Each one does the set-up (missing Debian packages), configures and builds into build/.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
# The same project built with ASan + UBSan (+ LeakSanitizer); the main
# ctest's sanitize-* tests run its suites (tests/sanitize/).
ASAN_DIR ?= build-asan
DEMO_DIR := $(BUILD_DIR)/demo
DEMO_SPEC := examples/encoder-tiny.tm

.PHONY: setup configure build asan test demo bench clean

setup:
	@bash scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	@cmake --build $(BUILD_DIR)

$(ASAN_DIR)/build.ninja:
	@cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DTMC_SANITIZE=address,undefined >/dev/null

asan: setup $(ASAN_DIR)/build.ninja
	@cmake --build $(ASAN_DIR)

test: build asan
	@cd $(BUILD_DIR) && ctest --output-on-failure -j2

demo: build
	@mkdir -p $(DEMO_DIR)
	$(BUILD_DIR)/bin/tmc check $(DEMO_SPEC)
	$(BUILD_DIR)/bin/tmc compile $(DEMO_SPEC) -o $(DEMO_DIR)/encoder-tiny
	$(BUILD_DIR)/bin/tmc init-weights $(DEMO_SPEC) -o $(DEMO_DIR)/weights.safetensors --seed 1
	$(DEMO_DIR)/encoder-tiny --weights $(DEMO_DIR)/weights.safetensors --tokens 1,2,3,4,5 --output $(DEMO_DIR)/out.npy
	$(DEMO_DIR)/encoder-tiny --weights $(DEMO_DIR)/weights.safetensors --tokens 1,2,3,4,5
	$(BUILD_DIR)/bin/tmc compile examples/gpt-mini.tm -o $(DEMO_DIR)/gpt-mini
	$(BUILD_DIR)/bin/tmc init-weights examples/gpt-mini.tm -o $(DEMO_DIR)/gpt-mini.safetensors --seed 1
	$(DEMO_DIR)/gpt-mini --weights $(DEMO_DIR)/gpt-mini.safetensors --prompt "The compiler said" \
	  --tokenizer examples/tokenizers/gpt2 --max-new 12 --temperature 0.9 --top-k 40 --seed 3 --bench
	@echo "# A trained decoder (examples/kjv: 1M parameters, learnt from the King James Bible):"
	$(BUILD_DIR)/bin/tmc compile examples/kjv/kjv.tm -o $(DEMO_DIR)/kjv
	$(DEMO_DIR)/kjv --weights examples/kjv/kjv.safetensors --tokenizer examples/kjv/tokenizer \
	  --prompt "And Jesus said unto them" --max-new 40
	$(DEMO_DIR)/kjv --weights examples/kjv/kjv.safetensors --tokenizer examples/kjv/tokenizer \
	  --prompt "The LORD is my shepherd" --max-new 40 --temperature 0.7 --top-k 20 --seed 1
	@echo "# Many prompts at once (one JSON object a line), then the same model as an HTTP server:"
	$(DEMO_DIR)/kjv --weights examples/kjv/kjv.safetensors --tokenizer examples/kjv/tokenizer \
	  --batch-input examples/kjv/prompts.jsonl --max-new 24 --temperature 0.7 --seed 1
	bash scripts/serve_demo.sh $(DEMO_DIR)/kjv examples/kjv/kjv.safetensors examples/kjv/tokenizer
	@echo "# The same model as a Hugging Face folder (config.json, model.safetensors, tokenizer.json):"
	python3 examples/kjv/export_hf.py $(DEMO_DIR)/kjv-hf
	$(BUILD_DIR)/bin/tmc import $(DEMO_DIR)/kjv-hf -o $(DEMO_DIR)/kjv-hf.tm
	$(BUILD_DIR)/bin/tmc compile $(DEMO_DIR)/kjv-hf.tm -o $(DEMO_DIR)/kjv-hf-model
	$(DEMO_DIR)/kjv-hf-model --weights $(DEMO_DIR)/kjv-hf --tokenizer $(DEMO_DIR)/kjv-hf \
	  --prompt "And Jesus said unto them" --max-new 40

# tmc against PyTorch, ONNX Runtime and llama.cpp (installs the peers; ~15 min; not part of test).
bench: configure
	@bash bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
