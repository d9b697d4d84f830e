// The bad-input corpus (tests/tools/bad_input/): every case of cases.txt runs the symmesh
// binary on one bad input and checks the exit code, every key word of the message, that
// stdout holds no partial result and that no output file was left behind. A hostile input
// that is accepted (exit 0: a name escaped in every output) names the files it must leave
// and what they must and must not hold (key-word forms below).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/tools/run_symmesh.hpp"

namespace fs = std::filesystem;
using symmesh::testing::run_symmesh;

namespace {

const std::string kCorpus = std::string(SYMMESH_SOURCE_DIR) + "/tests/tools/bad_input";
const std::string kManifest = kCorpus + "/cases.txt";

struct BadInputCase {
  std::string name;
  int exit_code = -1;
  std::string args;
  std::vector<std::string> key_words;
  int line = 0;  // in cases.txt
};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// "name | exit | args | key word | ..."; blank lines and lines starting with '#' skipped.
std::vector<BadInputCase> read_manifest() {
  std::vector<BadInputCase> cases;
  std::ifstream in(kManifest);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (trim(text).empty() || trim(text)[0] == '#') continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (std::size_t bar; (bar = text.find(" | ", start)) != std::string::npos; start = bar + 3)
      fields.push_back(trim(text.substr(start, bar - start)));
    fields.push_back(trim(text.substr(start)));
    BadInputCase c;
    c.line = line;
    if (fields.size() >= 4) {
      c.name = fields[0];
      c.exit_code = std::stoi(fields[1]);
      c.args = fields[2];
      c.key_words.assign(fields.begin() + 3, fields.end());
    } else {
      c.name = "malformed_line_" + std::to_string(line);  // fails in the test below
    }
    cases.push_back(c);
  }
  return cases;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
}

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (!entry.is_directory()) files.push_back(entry.path().string());
  return files;
}

class BadInputCorpus : public ::testing::TestWithParam<BadInputCase> {
 protected:
  void SetUp() override {
    char tmp[] = "/tmp/symmesh_bad_input_XXXXXX";
    ASSERT_NE(mkdtemp(tmp), nullptr);
    tmp_ = tmp;
  }
  void TearDown() override {
    if (!unreadable_.empty()) chmod(unreadable_.c_str(), 0600);
    std::error_code ignored;
    fs::remove_all(tmp_, ignored);
  }

  // Replaces the placeholders of cases.txt, creating what they name.
  std::string expand(std::string text) {
    if (text.find("{unreadable}") != std::string::npos) {
      unreadable_ = tmp_ + "/unreadable.yaml";
      if (!fs::exists(unreadable_)) {
        fs::copy_file(kCorpus + "/valid.yaml", unreadable_);
        chmod(unreadable_.c_str(), 0);
      }
      replace_all(text, "{unreadable}", unreadable_);
    }
    if (text.find("{file}") != std::string::npos) {
      regular_file_ = tmp_ + "/a-file";
      std::ofstream(regular_file_) << "not a folder\n";
      replace_all(text, "{file}", regular_file_);
    }
    if (text.find("{folder}") != std::string::npos) {
      folder_ = tmp_ + "/a-folder";
      fs::create_directories(folder_);
      replace_all(text, "{folder}", folder_);
    }
    replace_all(text, "{dir}", kCorpus);
    replace_all(text, "{tmp}", tmp_);
    return text;
  }

  std::string tmp_;
  std::string unreadable_;
  std::string regular_file_;
  std::string folder_;
};

// Everything under `dir`, folders too: a refused sweep must not leave its --out folder.
std::vector<std::string> entries_under(const fs::path& dir) {
  std::vector<std::string> entries;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    entries.push_back(entry.path().string());
  return entries;
}

}  // namespace

// The key-word forms that check files rather than stderr:
//   leaves PATH               PATH exists after the run (and it, or all under it, may be left)
//   file PATH has TEXT        PATH exists and holds TEXT
//   file PATH lacks TEXT      PATH exists and does not hold TEXT
//   output lacks TEXT         neither stdout nor stderr holds TEXT
// TEXT may use \t, \n, \r, \e (ESC) and \\ for bytes a manifest line cannot hold.
struct FileCheck {
  enum class Kind { none, leaves, has, lacks, output_lacks } kind = Kind::none;
  std::string path, text;
};

std::string unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 't'   ? '\t'
           : next == 'n' ? '\n'
           : next == 'r' ? '\r'
           : next == 'e' ? '\x1b'
                         : next;
  }
  return out;
}

FileCheck file_check(const std::string& key_word) {
  FileCheck c;
  if (key_word.starts_with("leaves ")) {
    c.kind = FileCheck::Kind::leaves;
    c.path = key_word.substr(7);
  } else if (key_word.starts_with("output lacks ")) {
    c.kind = FileCheck::Kind::output_lacks;
    c.text = unescape(key_word.substr(13));
  } else if (key_word.starts_with("file ")) {
    for (const auto& [verb, kind] :
         {std::pair{" has ", FileCheck::Kind::has}, std::pair{" lacks ", FileCheck::Kind::lacks}}) {
      const auto at = key_word.find(verb);
      if (at == std::string::npos) continue;
      c.kind = kind;
      c.path = key_word.substr(5, at - 5);
      c.text = unescape(key_word.substr(at + std::string(verb).size()));
      break;
    }
  }
  return c;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_P(BadInputCorpus, ExitsWithItsCodeAndSaysWhatIsWrong) {
  const BadInputCase& c = GetParam();
  ASSERT_FALSE(c.key_words.empty())
      << kManifest << ":" << c.line << ": expected 'name | exit | args | key word | ...'";
  const bool needs_unreadable = c.args.find("{unreadable}") != std::string::npos;
  if (needs_unreadable && geteuid() == 0)
    GTEST_SKIP() << "running as root: a mode-000 file is still readable, so the unreadable-file "
                    "case cannot be set up";
  const std::string args = expand(c.args);
  const auto result = run_symmesh(args);
  SCOPED_TRACE("symmesh " + args + "\n(" + kManifest + ":" + std::to_string(c.line) + ")");
  EXPECT_EQ(result.exit_code, c.exit_code) << "stderr: " << result.err;
  std::set<std::string> may_leave{unreadable_, regular_file_, folder_};
  for (const std::string& key_word : c.key_words) {
    const FileCheck check = file_check(expand(key_word));
    switch (check.kind) {
      case FileCheck::Kind::none:
        EXPECT_NE(result.err.find(expand(key_word)), std::string::npos)
            << "stderr lacks '" << expand(key_word) << "':\n"
            << result.err;
        break;
      case FileCheck::Kind::output_lacks:
        EXPECT_EQ((result.out + result.err).find(check.text), std::string::npos)
            << "the output holds '" << key_word << "':\n"
            << result.out << result.err;
        break;
      case FileCheck::Kind::leaves:
      case FileCheck::Kind::has:
      case FileCheck::Kind::lacks: {
        may_leave.insert(check.path);
        ASSERT_TRUE(fs::exists(check.path)) << "not written: " << check.path;
        if (fs::is_directory(check.path)) {
          EXPECT_EQ(check.kind, FileCheck::Kind::leaves) << check.path << " is a folder";
          break;
        }
        const std::string content = slurp(check.path);
        if (check.kind == FileCheck::Kind::has)
          EXPECT_NE(content.find(check.text), std::string::npos)
              << check.path << " lacks '" << check.text << "'";
        if (check.kind == FileCheck::Kind::lacks)
          EXPECT_EQ(content.find(check.text), std::string::npos)
              << check.path << " holds '" << check.text << "'";
        break;
      }
    }
  }
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  // A refused input leaves no partial result on stdout; an accepted one prints its result.
  if (c.exit_code != 0) EXPECT_EQ(result.out, "") << "stdout holds a (partial) result";
  // Nothing else written: the case's folder holds only what the placeholders put there
  // and the files its key words name ("leaves DIR" allows everything under DIR), with the
  // folders that hold them.
  const auto allowed = [&](const std::string& file) {
    for (const std::string& left : may_leave)
      if (!left.empty() &&
          (file == left || file.starts_with(left + "/") || left.starts_with(file + "/")))
        return true;
    return false;
  };
  for (const std::string& file : entries_under(tmp_))
    EXPECT_TRUE(allowed(file)) << "left behind: " << file;
  // Nor in the corpus folder (a trace or sweep output written next to the input).
  for (const std::string& file : files_under(kCorpus))
    EXPECT_FALSE(file.ends_with(".tmp") || file.ends_with(".json") || file.ends_with(".csv"))
        << "left behind: " << file;
}

INSTANTIATE_TEST_SUITE_P(BadInput, BadInputCorpus, ::testing::ValuesIn(read_manifest()),
                         [](const ::testing::TestParamInfo<BadInputCase>& info) {
                           std::string name = info.param.name;
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char ch) {
                                 return !std::isalnum(static_cast<unsigned char>(ch));
                               },
                               '_');
                           return name;
                         });

TEST(BadInputManifest, HasAtLeast150CasesWithUniqueNames) {
  const auto cases = read_manifest();
  EXPECT_GE(cases.size(), 150u);
  std::set<std::string> names;
  for (const auto& c : cases) EXPECT_TRUE(names.insert(c.name).second) << "twice: " << c.name;
}

// Every file of the folder is named by some case (as an input, or as the cluster file a
// case's message names), so none is dead weight.
TEST(BadInputManifest, EveryCorpusFileIsUsed) {
  const auto cases = read_manifest();
  std::string used;
  for (const auto& c : cases) {
    used += c.args + "\n";
    for (const auto& key_word : c.key_words) used += key_word + "\n";
  }
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    const std::string name = entry.path().filename().string();
    if (name == "cases.txt") continue;
    ++files;
    EXPECT_NE(used.find("{dir}/" + name), std::string::npos) << name << " is used by no case";
  }
  EXPECT_GE(files, 40);
}
