# The two commands a newcomer runs first: `make demo` and `make test`.
# Each one does the set-up (missing Debian packages), configures and builds into build/.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
DEMO_DIR := $(BUILD_DIR)/demo
DEMO_SPEC := examples/encoder-tiny.tm

.PHONY: setup configure build test demo bench clean

setup:
	@bash scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	@cmake --build $(BUILD_DIR)

test: build
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

# tmc against PyTorch, ONNX Runtime and llama.cpp (installs the peers; ~15 min; not part of test).
bench: configure
	@bash bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf $(BUILD_DIR)
