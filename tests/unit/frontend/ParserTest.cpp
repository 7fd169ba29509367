//===- ParserTest.cpp - Syntax trees, syntax errors and recovery ----------===//

#include "TestSpecs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;
using ::testing::HasSubstr;
using ::testing::Not;
using VK = ast::Value::Kind;

namespace {

/// Counts the lines of `text` that contain "error:".
unsigned countErrors(const std::string &text) {
  unsigned count = 0;
  for (size_t at = text.find("error:"); at != std::string::npos;
       at = text.find("error:", at + 1))
    ++count;
  return count;
}

TEST(ParserTest, BuildsTheTree) {
  Loaded loaded = load("model tiny {\n"
                       "  vocab = 100; d_model = 64\n"
                       "  embed_norm = layernorm(eps = 1e-12)\n"
                       "  encoder {\n"
                       "    norm = post(layernorm(eps = 1e-5))\n"
                       "    mask = padding + global(tokens = [0, 1])\n"
                       "    layers 0..5 { mask = none }\n"
                       "  }\n"
                       "}\n");
  ASSERT_TRUE(loaded.result.ast) << loaded.diagnostics;
  const ast::Model &model = *loaded.result.ast;
  EXPECT_EQ(model.name, "tiny");
  ASSERT_EQ(model.assignments.size(), 3u);
  EXPECT_EQ(model.assignments[1].key, "d_model");
  EXPECT_EQ(model.assignments[1].value->intValue, 64);

  const ast::Value &norm = *model.assignments[2].value;
  ASSERT_EQ(norm.kind, VK::Call);
  EXPECT_EQ(norm.name, "layernorm");
  ASSERT_EQ(norm.args.size(), 1u);
  EXPECT_EQ(norm.args[0].name, "eps");
  EXPECT_DOUBLE_EQ(norm.args[0].value->floatValue, 1e-12);

  ASSERT_EQ(model.stacks.size(), 1u);
  const ast::Stack &stack = model.stacks[0];
  EXPECT_EQ(stack.kind, "encoder");
  ASSERT_EQ(stack.assignments.size(), 2u);
  // post(...) takes its norm as an unnamed argument.
  const ast::Value &post = *stack.assignments[0].value;
  ASSERT_EQ(post.args.size(), 1u);
  EXPECT_TRUE(post.args[0].name.empty());
  EXPECT_EQ(post.args[0].value->name, "layernorm");

  const ast::Value &mask = *stack.assignments[1].value;
  ASSERT_EQ(mask.kind, VK::Sum);
  ASSERT_EQ(mask.elements.size(), 2u);
  EXPECT_EQ(mask.elements[0]->kind, VK::Name);
  const ast::Value &tokens = *mask.elements[1]->args[0].value;
  ASSERT_EQ(tokens.kind, VK::List);
  EXPECT_EQ(tokens.elements[1]->intValue, 1);

  ASSERT_EQ(stack.overrides.size(), 1u);
  EXPECT_EQ(stack.overrides[0].first, 0);
  EXPECT_EQ(stack.overrides[0].last, 5);
  EXPECT_EQ(stack.overrides[0].assignments[0].key, "mask");
}

TEST(ParserTest, BooleansAreValuesNotNames) {
  Loaded loaded = load("model m { embed_scale = true; x = false; y = truth }");
  ASSERT_TRUE(loaded.result.ast);
  const auto &assignments = loaded.result.ast->assignments;
  EXPECT_EQ(assignments[0].value->kind, VK::Bool);
  EXPECT_TRUE(assignments[0].value->boolValue);
  EXPECT_FALSE(assignments[1].value->boolValue);
  EXPECT_EQ(assignments[2].value->kind, VK::Name);
}

TEST(ParserTest, NewlinesInsideCallsAndListsAreIgnored) {
  Loaded loaded = load("model m {\n"
                       "  output = classifier(\n"
                       "    classes = 2,\n"
                       "    pool = first,\n"
                       "  )\n"
                       "  mask = padding +\n"
                       "    global(tokens = [\n 0,\n 1\n ])\n"
                       "}\n");
  ASSERT_TRUE(loaded.result.ast) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.ast->assignments[0].value->args.size(), 2u);
  EXPECT_EQ(loaded.result.ast->assignments[1].value->elements.size(), 2u);
}

TEST(ParserTest, RecordsLocations) {
  Loaded loaded = load("model m {\n  vocab = 100\n}\n");
  ASSERT_TRUE(loaded.result.ast);
  auto [line, column] = loaded.result.sourceMgr->getLineAndColumn(
      loaded.result.ast->assignments[0].value->loc);
  EXPECT_EQ(line, 2u);
  EXPECT_EQ(column, 11u);
}

TEST(ParserTest, ExpectedFoundMessage) {
  Loaded loaded = load("model m {\n  vocab 100\n}\n");
  EXPECT_FALSE(loaded.result.ast);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "test.tm:2:9: error: expected '=' after 'vocab', found integer 100"));
  // The source line and a caret under the culprit.
  EXPECT_THAT(loaded.diagnostics, HasSubstr("  vocab 100\n        ^~~\n"));
}

TEST(ParserTest, ReportsEverySyntaxErrorInOneRun) {
  Loaded loaded = load("model m {\n"
                       "  vocab = \n"
                       "  d_model = 64 64\n"
                       "  max_seq = (\n"
                       "  encoder { layers = ; heads = 4 }\n"
                       "}\n");
  EXPECT_FALSE(loaded.result.ast);
  EXPECT_EQ(loaded.result.errorCount, 4u) << loaded.diagnostics;
  EXPECT_EQ(countErrors(loaded.diagnostics), 4u);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("2:11: error: expected a value for 'vocab', found newline"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("3:16: error: expected a newline or ';' after the value of "
                "'d_model', found integer 64"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("4:13: error: expected a value"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("5:22: error: expected a value for 'layers', found ';'"));
}

TEST(ParserTest, LexicalErrorsDoNotCascade) {
  Loaded loaded = load("model m {\n  vocab = 1$0\n  d_model = @\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 2u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:12: error: unexpected character '$'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("3:13: error: unexpected character '@'"));
}

TEST(ParserTest, UnclosedBlockPointsAtItsStart) {
  Loaded loaded = load("model m {\n  encoder {\n    layers = 2\n");
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("4:1: error: expected '}' to close the encoder block, "
                        "found end of file"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:11: note: the encoder block opens here"));
}

TEST(ParserTest, MissingModelKeyword) {
  Loaded loaded = load("modle m { vocab = 1 }");
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("1:1: error: expected 'model' at the start of the file, "
                "found identifier 'modle'"));
}

TEST(ParserTest, EmptyFile) {
  for (const char *text : {"", "# nothing here\n", "\n\n  \n"}) {
    Loaded loaded = load(text);
    EXPECT_EQ(loaded.result.errorCount, 1u) << text;
    EXPECT_FALSE(loaded.result.ast);
    EXPECT_THAT(loaded.diagnostics,
                HasSubstr("error: the file holds no model: it is empty or only comments"));
    EXPECT_THAT(loaded.diagnostics, HasSubstr("note: a spec is one block: model NAME {"));
  }
}

TEST(ParserTest, OneModelPerFile) {
  Loaded loaded = load("model a { }\nmodel b { }\n");
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:1: error: a file holds exactly one model"));
}

TEST(ParserTest, UnknownAndMisplacedBlocks) {
  Loaded loaded = load("model m {\n"
                       "  encodr { layers = 2 }\n"
                       "  encoder {\n"
                       "    decoder { }\n"
                       "    layers 0..1 { inner { } }\n"
                       "  }\n"
                       "}\n");
  EXPECT_EQ(loaded.result.errorCount, 3u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:3: error: unknown block 'encodr'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("4:5: error: 'decoder' blocks belong at model level"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "5:19: error: blocks cannot be nested inside 'layers A..B { }'"));
}

TEST(ParserTest, MalformedLayerRange) {
  Loaded loaded = load("model m {\n  encoder {\n    layers 0.5 { }\n"
                       "    layers 1..x { }\n  }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 2u) << loaded.diagnostics;
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("3:12: error: expected '=' or a layer range (layers A..B { }) "
                "after 'layers', found float 0.5"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("4:15: error: expected the last layer of the range"));
}

TEST(ParserTest, CallArgumentErrors) {
  Loaded loaded = load("model m {\n  position = rope(theta = 1 2)\n}\n");
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("2:29: error: expected ',' or ')' in the arguments of 'rope', "
                "found integer 2"));
}

TEST(ParserTest, ErrorsDoNotProduceATree) {
  Loaded loaded = load("model m { vocab = }");
  EXPECT_FALSE(loaded.result.ast);
  EXPECT_FALSE(loaded.result.ok());
  EXPECT_THAT(loaded.diagnostics, Not(HasSubstr("missing required key")));
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "model m {\n  mask = " + std::string(1000, '[') + "\n}\n";
  Loaded loaded = load(deep);
  EXPECT_FALSE(loaded.result.ast);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:74: error: value nested more than 64 levels deep"));
}

TEST(ParserTest, TooManyErrorsAreCountedButNotAllShown) {
  std::string text = "model m {\n";
  for (int i = 0; i < 150; ++i)
    text += "  k" + std::to_string(i) + " 1\n";
  text += "}\n";
  Loaded loaded = load(text);
  EXPECT_EQ(loaded.result.errorCount, 150u);
  EXPECT_EQ(countErrors(loaded.diagnostics), 100u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("note: 50 more errors not shown\n"));
}

TEST(ParserTest, DumpsTheTree) {
  Loaded loaded = load("model m {\n"
                       "  vocab = 100\n"
                       "  embed_norm = layernorm(eps = 1e-5)\n"
                       "  encoder {\n"
                       "    norm = pre(rmsnorm)\n"
                       "    mask = causal + global(tokens = [0])\n"
                       "    layers 1..2 { bias = false }\n"
                       "  }\n"
                       "}\n");
  ASSERT_TRUE(loaded.result.ast) << loaded.diagnostics;
  std::string text;
  llvm::raw_string_ostream os(text);
  dumpAST(*loaded.result.ast, *loaded.result.sourceMgr, os);
  EXPECT_EQ(text, "Model m @1:1\n"
                  "  Assignment vocab @2:3\n"
                  "    Int 100 @2:11\n"
                  "  Assignment embed_norm @3:3\n"
                  "    Call layernorm @3:16\n"
                  "      Argument eps @3:26\n"
                  "        Float 1e-5 @3:32\n"
                  "  Stack encoder @4:3\n"
                  "    Assignment norm @5:5\n"
                  "      Call pre @5:12\n"
                  "        Argument (positional) @5:16\n"
                  "          Name rmsnorm @5:16\n"
                  "    Assignment mask @6:5\n"
                  "      Sum @6:12\n"
                  "        Name causal @6:12\n"
                  "        Call global @6:21\n"
                  "          Argument tokens @6:28\n"
                  "            List @6:37\n"
                  "              Int 0 @6:38\n"
                  "    Override layers 1..2 @7:5\n"
                  "      Assignment bias @7:19\n"
                  "        Bool false @7:26\n");
}

} // namespace
