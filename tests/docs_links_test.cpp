// Every Markdown link of the repository must resolve inside it (docs/architecture.md,
// "Documentation"): a fresh clone has only what is committed, with no ../shared beside it
// and no build folder, so a link that leaves the repository, or names a missing file or
// heading, is broken for every reader but its author. The same holds for the paths source
// comments name: one that looks like the repository's own (a top-level folder or ../, then
// a file with a known extension) must name a file of it, and none may point into the
// workspace beside the checkout or to an absolute path of the machine it was written on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Golden copies of program output (symmesh sweep's summary.md): their links name files
// written next to them in a sweep's output folder, not files of the repository.
const char* const kGeneratedMarkdown[] = {"tests/tools/golden"};

struct Link {
  int line = 0;  // 1-based, where the target starts
  std::string target;
};

struct BrokenLink {
  std::string file;  // relative to the repository root
  int line = 0;
  std::string target;
  std::string why;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    // A line of spaces is a blank line: it ends a block.
    if (line.find_first_not_of(" \t") == std::string::npos) line.clear();
    lines.push_back(line);
  }
  return lines;
}

// The fence a line opens or closes: up to 3 spaces, then 3 or more backticks or tildes.
std::string fence_of(const std::string& line) {
  size_t i = 0;
  while (i < 3 && i < line.size() && line[i] == ' ') ++i;
  if (i == line.size() || (line[i] != '`' && line[i] != '~')) return "";
  size_t j = i;
  while (j < line.size() && line[j] == line[i]) ++j;
  return j - i >= 3 ? line.substr(i, j - i) : "";
}

// The file's lines with every line of a fenced code block (fences included) emptied, so
// that runs of non-empty lines are the prose blocks.
std::vector<std::string> prose_lines(const std::string& text) {
  std::vector<std::string> lines = lines_of(text);
  std::string open;  // the fence of the block we are in
  for (std::string& line : lines) {
    const std::string fence = fence_of(line);
    if (open.empty() && !fence.empty()) {
      open = fence;
    } else if (!open.empty() && fence.size() >= open.size() && fence[0] == open[0] &&
               line.find_first_not_of(" \t", line.find(fence) + fence.size()) ==
                   std::string::npos) {
      open.clear();
    } else if (open.empty()) {
      continue;
    }
    line.clear();
  }
  return lines;
}

// Code spans (`x`, ``x ` y``; they may cross lines) blanked out, line breaks kept, so that
// nothing inside them reads as a link. An unmatched backtick run is literal.
std::string without_code_spans(std::string text) {
  auto run_at = [&](size_t i) {
    size_t j = i;
    while (j < text.size() && text[j] == '`') ++j;
    return j - i;
  };
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\\') {
      i += 2;
      continue;
    }
    if (text[i] != '`') {
      ++i;
      continue;
    }
    const size_t run = run_at(i);
    size_t close = i + run;
    while (close < text.size() && (text[close] != '`' || run_at(close) != run))
      close += text[close] == '`' ? run_at(close) : 1;
    if (close >= text.size()) {
      i += run;
      continue;
    }
    for (size_t p = i; p < close + run; ++p)
      if (text[p] != '\n') text[p] = ' ';
    i = close + run;
  }
  return text;
}

// The destination of an inline link whose '(' is just before `i`: `<a b.md>` or a run
// without spaces (balanced parentheses allowed), then an optional title, then ')'. Sets
// `end` past the ')'; nullopt when the parenthesis never closes (not a link).
std::optional<std::string> destination(const std::string& text, size_t i, size_t& end) {
  auto skip_spaces = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_spaces();
  std::string target;
  if (i < text.size() && text[i] == '<') {
    const size_t close = text.find_first_of(">\n", i);
    if (close == std::string::npos || text[close] != '>') return std::nullopt;
    target = text.substr(i + 1, close - i - 1);
    i = close + 1;
  } else {
    const size_t start = i;
    for (int depth = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\\') ++i;
      if (std::isspace(static_cast<unsigned char>(c)) || (c == ')' && depth == 0)) break;
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    }
    target = text.substr(start, std::min(i, text.size()) - start);
  }
  skip_spaces();
  if (i < text.size() && (text[i] == '"' || text[i] == '\'' || text[i] == '(')) {
    const size_t close = text.find(text[i] == '(' ? ')' : text[i], i + 1);
    if (close == std::string::npos) return std::nullopt;
    i = close + 1;
    skip_spaces();
  }
  if (i >= text.size() || text[i] != ')') return std::nullopt;
  end = i;
  return target;
}

// Inline links and images, [text](target) and ![alt](target), outside code; nested ones
// ([![badge](b.svg)](page.md)) give both targets. Reference links ([text][ref]) are not read.
std::vector<Link> inline_links(const std::string& markdown) {
  const std::vector<std::string> lines = prose_lines(markdown);
  std::vector<Link> links;
  for (size_t first = 0; first < lines.size();) {
    if (lines[first].empty()) {
      ++first;
      continue;
    }
    size_t last = first;
    std::string block;
    std::vector<size_t> line_starts;  // offset of each line of the block
    for (; last < lines.size() && !lines[last].empty(); ++last) {
      line_starts.push_back(block.size());
      block += lines[last] + "\n";
    }
    const std::string text = without_code_spans(block);
    std::vector<size_t> open;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\') {
        ++i;
      } else if (text[i] == '[') {
        open.push_back(i);
      } else if (text[i] == ']' && !open.empty()) {
        open.pop_back();
        size_t end = 0;
        if (i + 1 < text.size() && text[i + 1] == '(')
          if (auto target = destination(text, i + 2, end)) {
            const auto line = std::upper_bound(line_starts.begin(), line_starts.end(), i + 1);
            links.push_back({static_cast<int>(first + (line - line_starts.begin())), *target});
            i = end;
          }
      }
    }
    first = last;
  }
  return links;
}

// GitHub's anchor for a heading: lowercase, spaces to '-', punctuation dropped except '-'
// and '_'. Letters beyond ASCII are kept as they are; non-ASCII punctuation and symbols
// GitHub drops (dashes, quotes, arrows, ×, math) are recognised by their Unicode blocks.
std::string github_slug(const std::string& heading) {
  std::string text;  // [text](target) -> text
  for (size_t i = 0; i < heading.size(); ++i) {
    size_t end = 0;
    if (heading[i] == ']' && i + 1 < heading.size() && heading[i + 1] == '(' &&
        destination(heading, i + 2, end))
      i = end;
    else
      text += heading[i];
  }
  std::string slug;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (std::isalnum(c) || c == '-' || c == '_') slug += static_cast<char>(std::tolower(c));
      if (c == ' ') slug += '-';
      ++i;
      continue;
    }
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    unsigned code = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len && i + k < text.size(); ++k)
      code = (code << 6) | (text[i + k] & 0x3F);
    const bool symbol =
        (code >= 0xA0 && code <= 0xBF && code != 0xAA && code != 0xB5 && code != 0xBA) ||
        code == 0xD7 || code == 0xF7 || (code >= 0x2000 && code <= 0x2BFF) ||
        (code >= 0x3000 && code <= 0x303F);
    if (!symbol) slug += text.substr(i, len);
    i += len;
  }
  return slug;
}

// The anchors of a Markdown file's headings (ATX "## x" and setext "x\n---"), repeated
// slugs numbered as GitHub does: x, x-1, x-2.
std::vector<std::string> heading_anchors(const std::string& markdown) {
  const std::vector<std::string> lines = prose_lines(markdown);
  std::vector<std::string> anchors;
  std::map<std::string, int> seen;
  auto add = [&](const std::string& heading) {
    const std::string slug = github_slug(heading);
    const int n = seen[slug]++;
    anchors.push_back(n == 0 ? slug : slug + "-" + std::to_string(n));
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t hashes = line.find_first_not_of('#', line.find_first_not_of(' '));
    const size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && indent <= 3 && line[indent] == '#' && hashes - indent <= 6 &&
        (hashes == std::string::npos || line[hashes] == ' ')) {
      std::string heading = hashes == std::string::npos ? "" : line.substr(hashes);
      const size_t closing = heading.find_last_not_of("# ");
      if (closing != std::string::npos && closing + 1 < heading.size() &&
          heading[closing + 1] == ' ')
        heading.erase(closing + 1);
      heading.erase(0, heading.find_first_not_of(' '));
      add(heading.substr(0, heading.find_last_not_of(' ') + 1));
      continue;
    }
    const bool underline =
        indent != std::string::npos && indent <= 3 &&
        (line[indent] == '=' || line[indent] == '-') &&
        line.find_first_not_of(std::string(1, line[indent]) + " ", indent) == std::string::npos;
    // A table row or an ATX heading above a "---" is not underlined by it.
    const std::string& above = i > 0 ? lines[i - 1] : line;
    if (underline && i > 0 && !above.empty() && above.find('|') == std::string::npos &&
        above[above.find_first_not_of(' ')] != '#')
      add(above.substr(above.find_first_not_of(' ')));
  }
  return anchors;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string percent_decoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool is_build_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "CMakeCache.txt", ec);
}

// Whether `path` (inside `root`) is in a build folder or in .git: present here, absent
// from a clone.
bool in_untracked_dir(const fs::path& root, const fs::path& path) {
  for (fs::path dir = path.parent_path(); dir != root && dir.has_relative_path();
       dir = dir.parent_path())
    if (is_build_dir(dir) || dir.filename() == ".git") return true;
  return false;
}

// What is wrong with `target`, linked from `file`; nullopt when it resolves. Targets with
// a scheme (https:, mailto:) are not ours to check; "#x" points into `file` itself.
std::optional<std::string> link_problem(const fs::path& root, const fs::path& file,
                                        const std::string& target) {
  // A scheme: a letter, then letters, digits, '+', '.' or '-', then ':' (RFC 3986).
  const size_t colon = target.find(':');
  const bool scheme =
      colon != std::string::npos && colon > 0 &&
      std::isalpha(static_cast<unsigned char>(target[0])) &&
      std::all_of(target.begin(), target.begin() + colon, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '.' || c == '-';
      });
  if (scheme || target.rfind("//", 0) == 0) return std::nullopt;
  const size_t hash = target.find('#');
  const std::string path = percent_decoded(target.substr(0, hash));
  const std::string fragment = hash == std::string::npos ? "" : target.substr(hash + 1);
  fs::path resolved = file;
  if (!path.empty())
    resolved = (path[0] == '/' ? root / path.substr(1) : file.parent_path() / path);
  resolved = resolved.lexically_normal();
  const fs::path relative = resolved.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..")
    return "resolves outside the repository (to " + resolved.string() +
           "), which a clone does not have";
  std::error_code ec;
  if (!fs::exists(resolved, ec)) return "names a missing file: " + relative.string();
  const fs::path real = fs::weakly_canonical(resolved, ec).lexically_relative(root);
  if (real.empty() || *real.begin() == "..")
    return "goes through a symbolic link out of the repository (to " +
           fs::weakly_canonical(resolved, ec).string() + ")";
  if (in_untracked_dir(root, resolved))
    return "points into a build folder or .git (" + relative.string() +
           "), which a clone does not have";
  if (fragment.empty() || resolved.extension() != ".md" || !fs::is_regular_file(resolved, ec))
    return std::nullopt;
  const auto anchors = heading_anchors(read_text(resolved));
  if (std::find(anchors.begin(), anchors.end(), percent_decoded(fragment)) == anchors.end())
    return "names no heading of " + relative.string() + " (no anchor '#" + fragment +
           "' among its " + std::to_string(anchors.size()) + " headings)";
  return std::nullopt;
}

bool generated(const fs::path& relative) {
  for (const char* dir : kGeneratedMarkdown)
    if (relative == fs::path(dir)) return true;
  return false;
}

// The files under `root` that `keep_file` keeps, sorted, in folders `skip_folder` does not
// skip (nor build folders: they hold a CMakeCache.txt).
std::vector<fs::path> files_under(const fs::path& root,
                                  const std::function<bool(const fs::path&)>& skip_folder,
                                  const std::function<bool(const fs::path&)>& keep_file) {
  std::vector<fs::path> files;
  for (auto it =
           fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& path = it->path();
    if (it->is_directory()) {
      if (skip_folder(path) || is_build_dir(path)) it.disable_recursion_pending();
    } else if (it->is_regular_file() && keep_file(path)) {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The repository's Markdown files, skipping hidden folders (.git), build folders and golden
// program output.
std::vector<fs::path> markdown_files(const fs::path& root) {
  return files_under(
      root,
      [&](const fs::path& dir) {
        return dir.filename().string().front() == '.' || generated(dir.lexically_relative(root));
      },
      [](const fs::path& file) { return file.extension() == ".md"; });
}

std::vector<BrokenLink> broken_links(const fs::path& root_dir) {
  const fs::path root = fs::weakly_canonical(root_dir);
  std::vector<BrokenLink> broken;
  for (const fs::path& file : markdown_files(root))
    for (const Link& link : inline_links(read_text(file)))
      if (auto why = link_problem(root, file, link.target))
        broken.push_back({file.lexically_relative(root).string(), link.line, link.target, *why});
  return broken;
}

std::vector<std::string> targets_of(const std::vector<Link>& links) {
  std::vector<std::string> out;
  for (const Link& link : links) out.push_back(std::to_string(link.line) + " " + link.target);
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}


// ---- Paths named in source comments ----

// How a source file writes comments; none: not a source file whose comments are read.
enum class CommentSyntax { none, c, python, shell, cmake };

// C and C++ (and CUDA), Python, CMake, and shell: .sh files and any file without an
// extension that starts with "#!" (tools/setup, .ci/run).
CommentSyntax comment_syntax(const fs::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cu" || ext == ".cuh")
    return CommentSyntax::c;
  if (ext == ".py") return CommentSyntax::python;
  if (ext == ".cmake" || path.filename() == "CMakeLists.txt") return CommentSyntax::cmake;
  if (ext == ".sh") return CommentSyntax::shell;
  if (ext.empty()) {
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {0, 0};
    in.read(magic, 2);
    if (in.gcount() == 2 && magic[0] == '#' && magic[1] == '!') return CommentSyntax::shell;
  }
  return CommentSyntax::none;
}

struct Comment {
  int line = 0;  // 1-based, where the comment starts
  std::string text;
};

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether a C++ raw string starts at `i` (R" after nothing of an identifier, or after the
// prefix L, u, U or u8).
bool raw_string_at(const std::string& text, size_t i) {
  if (text.compare(i, 2, "R\"") != 0) return false;
  size_t start = i;
  if (start >= 2 && text.compare(start - 2, 2, "u8") == 0)
    start -= 2;
  else if (start >= 1 && (text[start - 1] == 'L' || text[start - 1] == 'u' || text[start - 1] == 'U'))
    start -= 1;
  return start == 0 || !identifier_char(text[start - 1]);
}

// The comments of `text`, string literals skipped: // and /* */ in C++ (raw strings and
// digit separators, 1'000, understood); # in Python, plus docstrings (a triple-quoted
// string first on its line); # in shell and CMake where a word starts (not ${#x} nor $#),
// CMake's bracket comments #[[ ]] and bracket arguments [[ ]] understood.
std::vector<Comment> comments_of(const std::string& text, CommentSyntax syntax) {
  std::vector<Comment> comments;
  const size_t n = text.size();
  int line = 1;
  size_t i = 0;
  // Moves i to `end`, counting the lines passed.
  const auto advance = [&](size_t end) {
    end = std::min(std::max(end, i + 1), n);
    line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                         text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    i = end;
  };
  const auto take = [&](size_t end) {  // the comment from i to `end`
    end = std::min(end, n);
    comments.push_back({line, text.substr(i, end - i)});
    advance(end);
  };
  const auto line_end = [&](size_t from) { return std::min(text.find('\n', from), n); };
  const auto past = [&](const std::string& close, size_t from) {
    const size_t at = text.find(close, from);
    return at == std::string::npos ? n : at + close.size();
  };
  // A quoted string at i: past its closing quote (escapes skipped); a newline ends it
  // unless `multiline`.
  const auto skip_quoted = [&](bool escapes, bool multiline) {
    const char quote = text[i];
    size_t j = i + 1;
    while (j < n && text[j] != quote && (multiline || text[j] != '\n'))
      j += escapes && text[j] == '\\' ? 2 : 1;
    advance(j + 1);
  };
  // A CMake bracket "[" "="* "[" at `at`: past its closing bracket; npos when none opens.
  const auto bracket_end = [&](size_t at) -> size_t {
    if (at >= n || text[at] != '[') return std::string::npos;
    size_t j = at + 1;
    while (j < n && text[j] == '=') ++j;
    if (j >= n || text[j] != '[') return std::string::npos;
    return past("]" + std::string(j - at - 1, '=') + "]", j + 1);
  };
  while (i < n) {
    const char c = text[i];
    const char before = i > 0 ? text[i - 1] : '\n';
    if (syntax == CommentSyntax::c) {
      if (text.compare(i, 2, "//") == 0) {
        take(line_end(i));
      } else if (text.compare(i, 2, "/*") == 0) {
        take(past("*/", i + 2));
      } else if (raw_string_at(text, i)) {
        const size_t open = std::min(text.find('(', i + 2), n);
        advance(past(")" + text.substr(i + 2, open - i - 2) + "\"", open));
      } else if (c == '"' || (c == '\'' && !identifier_char(before))) {
        skip_quoted(true, false);
      } else {
        advance(i + 1);
      }
    } else if (syntax == CommentSyntax::python) {
      const std::string triple = text.substr(i, 3);
      if (triple == "\"\"\"" || triple == "'''") {
        const size_t line_start = text.rfind('\n', i == 0 ? 0 : i - 1);
        const size_t from = i == 0 || line_start == std::string::npos ? 0 : line_start + 1;
        if (text.find_first_not_of(" \t", from) == i)
          take(past(triple, i + 3));
        else
          advance(past(triple, i + 3));
      } else if (c == '#') {
        take(line_end(i));
      } else if (c == '"' || c == '\'') {
        skip_quoted(true, false);
      } else {
        advance(i + 1);
      }
    } else {  // shell, CMake
      const bool word_start =
          std::isspace(static_cast<unsigned char>(before)) || before == '(' || before == ';';
      const size_t bracket =
          syntax == CommentSyntax::cmake ? bracket_end(c == '#' ? i + 1 : i) : std::string::npos;
      if (c == '#' && word_start) {
        take(bracket != std::string::npos ? bracket : line_end(i));
      } else if (c == '[' && bracket != std::string::npos) {
        advance(bracket);
      } else if (c == '"') {
        skip_quoted(true, true);
      } else if (c == '\'' && syntax == CommentSyntax::shell) {
        skip_quoted(false, true);
      } else if (c == '\\') {
        advance(i + 2);
      } else {
        advance(i + 1);
      }
    }
  }
  return comments;
}

// The top-level folders of the repository: a comment's path that starts with one of them
// names a file of the repository, relative to its root.
const char* const kTopLevelFolders[] = {"core", "strategies", "scenario", "sim",
                                        "evaluation", "tools", "python", "hw",
                                        "tests", "docs", "scenarios", "cmake"};
// Where the project's machines keep their checkouts, beside the workspace's shared folder:
// an absolute path under it exists on the machine a comment was written on, not in a clone.
const char* const kWorkspaceRoot = "/work/";
// The extensions a path relative to the repository must end with to be checked: the kinds
// of file the comments name.
const char* const kCheckedExtensions[] = {".md", ".hpp", ".cpp", ".py", ".yaml", ".json"};

struct CommentPath {
  int line = 0;  // 1-based
  std::string path;
};

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
         c == '-' || c == '+';
}

// The paths a comment names that this test checks: runs of path characters (a sentence's
// final dots dropped) that start with a top-level folder of the repository, with "shared/"
// (the workspace's folder beside the checkout) or with "../", and end with a checked
// extension; and absolute paths into the checkout (`root`) or under kWorkspaceRoot, whatever
// they end with. A path inside a longer run (github.com/o/r/docs/x.md) names another
// repository's file, a run cut by other characters (docs/x*.md) no file, and a file name of
// one character (core/x.hpp, as in "includes from core/x.hpp to <symmesh/core/x.hpp>") is
// a placeholder: none of them is one.
std::vector<CommentPath> comment_paths(const Comment& comment, const std::string& root) {
  std::vector<CommentPath> paths;
  const std::string& text = comment.text;
  int line = comment.line;
  for (size_t i = 0; i < text.size();) {
    if (!path_char(text[i])) {
      line += text[i] == '\n';
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && path_char(text[end])) ++end;
    std::string run = text.substr(i, end - i);
    i = end;
    while (!run.empty() && run.back() == '.') run.pop_back();
    const auto starts = [&](const std::string& prefix) { return run.rfind(prefix, 0) == 0; };
    if (starts(kWorkspaceRoot) || starts(root + "/")) {
      paths.push_back({line, run});
      continue;
    }
    const bool checked_extension =
        std::any_of(std::begin(kCheckedExtensions), std::end(kCheckedExtensions),
                    [&](const char* ext) { return run.ends_with(ext); });
    const bool ours = starts("../") || starts("shared/") ||
                      std::any_of(std::begin(kTopLevelFolders), std::end(kTopLevelFolders),
                                  [&](const char* top) { return starts(std::string(top) + "/"); });
    const bool placeholder = fs::path(run).stem().string().size() == 1;
    if (checked_extension && ours && !placeholder) paths.push_back({line, run});
  }
  return paths;
}

// What is wrong with `path`, named in a comment of `file`; nullopt when it names a file of
// the repository. A path starting with "../" is relative to the file's folder, the others
// to the root.
std::optional<std::string> comment_path_problem(const fs::path& root, const fs::path& file,
                                                const std::string& path) {
  if (path[0] == '/')
    return "is an absolute path of the machine it was written on, which a clone does not have";
  if (path.rfind("shared/", 0) == 0)
    return "is in the workspace's shared folder beside the checkout, which a clone does not "
           "have (docs/ holds the references the repository keeps)";
  const fs::path resolved =
      (path.rfind("../", 0) == 0 ? file.parent_path() / path : root / path).lexically_normal();
  const fs::path relative = resolved.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..")
    return "resolves outside the repository (to " + resolved.string() +
           "), which a clone does not have";
  std::error_code ec;
  if (!fs::exists(resolved, ec)) return "is a missing file";
  return std::nullopt;
}

// The repository's source files whose comments are read, skipping build folders and hidden
// folders (.git, .venv) but .ci.
std::vector<fs::path> source_files(const fs::path& root) {
  return files_under(
      root,
      [&](const fs::path& dir) {
        return dir.filename().string().front() == '.' && dir.lexically_relative(root) != ".ci";
      },
      [](const fs::path& file) { return comment_syntax(file) != CommentSyntax::none; });
}

std::vector<BrokenLink> broken_comment_paths(const fs::path& root_dir) {
  const fs::path root = fs::weakly_canonical(root_dir);
  std::vector<BrokenLink> broken;
  for (const fs::path& file : source_files(root))
    for (const Comment& comment : comments_of(read_text(file), comment_syntax(file)))
      for (const CommentPath& path : comment_paths(comment, root.string()))
        if (auto why = comment_path_problem(root, file, path.path))
          broken.push_back({file.lexically_relative(root).string(), path.line, path.path, *why});
  return broken;
}

std::vector<std::string> paths_of(const std::string& text, CommentSyntax syntax,
                                  const std::string& root = "/nowhere") {
  std::vector<std::string> out;
  for (const Comment& comment : comments_of(text, syntax))
    for (const CommentPath& path : comment_paths(comment, root))
      out.push_back(std::to_string(path.line) + " " + path.path);
  return out;
}

}  // namespace

TEST(DocsLinks, ReadsInlineLinksAndImagesOutsideCode) {
  const std::string markdown =
      "See [the format](docs/scenario-format.md#sweep) and ![plot](a.svg \"title\").\n"
      "A [link\nacross lines](b.md), [![badge](c.svg)](d.md) and <e.md> are found;\n"
      "`[code](not-a-link.md)` is not, nor ``a ` [x](y.md)`` or `a span\n"
      "over two lines [x](z.md)`.\n"
      "\n"
      "```sh\n"
      "echo [x](fenced.md)\n"
      "```\n"
      "~~~\n"
      "[x](tilde.md)\n"
      "~~~\n"
      "Last [one](<with space.md>) and [paren](f(1).md).\n";
  EXPECT_EQ(targets_of(inline_links(markdown)),
            (std::vector<std::string>{"1 docs/scenario-format.md#sweep", "1 a.svg", "3 b.md",
                                      "3 c.svg", "3 d.md", "13 with space.md", "13 f(1).md"}));
}

TEST(DocsLinks, AnchorsFollowGitHubSlugRules) {
  EXPECT_EQ(github_slug("Outputs: stable JSON keys"), "outputs-stable-json-keys");
  EXPECT_EQ(github_slug("`symmesh plan` \xE2\x80\x94 choose how one matmul is sharded"),
            "symmesh-plan--choose-how-one-matmul-is-sharded");
  EXPECT_EQ(github_slug("put_signal / wait_signal"), "put_signal--wait_signal");
  EXPECT_EQ(github_slug("The [linear](x.md) op, S(0) \xC3\x97 R"), "the-linear-op-s0--r");
  EXPECT_EQ(heading_anchors("# A\n\n## A\n```\n# not a heading\n```\nB\n---\n### C ###\n"),
            (std::vector<std::string>{"a", "a-1", "b", "c"}));
}

TEST(DocsLinks, ReportsEveryKindOfBrokenLink) {
  // The checker must be able to fail: a small repository with one link of each kind.
  const fs::path root =
      fs::temp_directory_path() / ("symmesh_docs_links_" + std::to_string(::getpid()));
  fs::remove_all(root);
  write_file(root / "README.md",
             "[ok](docs/a.md), [ok](docs/a.md#the-heading), [ok](#readme), [ok](scenarios/)\n"
             "[web](https://example.com/x.md) [mail](mailto:a@b.c)\n"
             "[out](../shared/DESIGN.md)\n"
             "[missing](docs/b.md)\n"
             "[no heading](docs/a.md#nothing-here)\n"
             "[no anchor here](#nowhere)\n"
             "[build](build/log.md)\n"
             "# Readme\n");
  write_file(root / "docs/a.md", "# The heading\n[up](../README.md)\n");
  write_file(root / "build/CMakeCache.txt", "");
  write_file(root / "build/log.md", "[ignored](nothing.md)\n");
  write_file(root / ".hidden/x.md", "[ignored](nothing.md)\n");
  fs::create_directories(root / "scenarios");
  std::vector<std::string> found;
  for (const BrokenLink& b : broken_links(root))
    found.push_back(b.file + ":" + std::to_string(b.line) + " " + b.target);
  EXPECT_EQ(found,
            (std::vector<std::string>{"README.md:3 ../shared/DESIGN.md", "README.md:4 docs/b.md",
                                      "README.md:5 docs/a.md#nothing-here", "README.md:6 #nowhere",
                                      "README.md:7 build/log.md"}));
  fs::remove_all(root);
}

TEST(DocsLinks, EveryMarkdownLinkOfTheRepositoryResolvesInsideIt) {
  const fs::path root = fs::weakly_canonical(SYMMESH_SOURCE_DIR);
  ASSERT_FALSE(markdown_files(root).empty()) << "no Markdown file found under " << root;
  const auto broken = broken_links(root);
  for (const BrokenLink& b : broken) {
    const std::string path = (root / b.file).string();
    ADD_FAILURE_AT(path.c_str(), b.line) << "link '" << b.target << "' " << b.why;
  }
  EXPECT_TRUE(broken.empty()) << broken.size() << " broken Markdown link(s), listed above";
}

TEST(DocsLinks, ReadsThePathsOfCommentsOnly) {
  // C++: strings (raw ones too), character literals and digit separators are no comments.
  EXPECT_EQ(paths_of("// see docs/one.md and core/two.hpp.\n"
                     "const char* s = \"docs/no.md // tests/no.cpp\"; char q = '\"';\n"
                     "int n = 1'000; /* a block\n   over lines: tests/three.cpp */\n"
                     "auto r = R\"x(// docs/raw.md)x\"; // ../up.md\n"
                     "// not checked: docs/ notes/nine.md docs/ni*.md docs/nine.txt\n"
                     "// o/r/docs/nine.md core/x.hpp\n",
                     CommentSyntax::c),
            (std::vector<std::string>{"1 docs/one.md", "1 core/two.hpp", "4 tests/three.cpp",
                                      "5 ../up.md"}));
  // Python: # comments and docstrings, not other strings.
  EXPECT_EQ(paths_of("\"\"\"Reads\nscenarios/one.yaml.\"\"\"\n"
                     "x = \"docs/no.md\"  # python/two.py\n"
                     "y = '''tools/no.py''' + '#docs/no.md'\n",
                     CommentSyntax::python),
            (std::vector<std::string>{"2 scenarios/one.yaml", "3 python/two.py"}));
  // Shell: # where a word starts, outside quotes.
  EXPECT_EQ(paths_of("#!/bin/sh\n"
                     "# tools/one.md\n"
                     "echo \"# docs/no.md\" '# docs/no.md' ${#x} $# # hw/two.hpp\n",
                     CommentSyntax::shell),
            (std::vector<std::string>{"2 tools/one.md", "3 hw/two.hpp"}));
  // CMake: bracket comments are comments, bracket arguments are not.
  EXPECT_EQ(paths_of("set(x \"# docs/no.md\") # tests/one.cpp\n"
                     "#[[ a bracket comment\n naming docs/two.md ]]\n"
                     "set(y [=[# docs/no.md]=])\n",
                     CommentSyntax::cmake),
            (std::vector<std::string>{"1 tests/one.cpp", "3 docs/two.md"}));
  // Absolute paths into the checkout or under the workspace, whatever they end with.
  EXPECT_EQ(paths_of(std::string("// ") + kWorkspaceRoot + "main/build and /repo/core/one.hpp\n",
                     CommentSyntax::c, "/repo"),
            (std::vector<std::string>{"1 /work/main/build", "1 /repo/core/one.hpp"}));
}

TEST(DocsLinks, ReportsEveryKindOfBrokenCommentPath) {
  // The checker must be able to fail: a small repository with one path of each kind.
  const fs::path root =
      fs::temp_directory_path() / ("symmesh_comment_paths_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string absolute = fs::weakly_canonical(root).string() + "/tests/three.py";
  write_file(root / "docs/present.md", "# Present\n");
  write_file(root / "core/one.hpp", "// docs/present.md, docs/missing.md\n");
  write_file(root / "tools/two.cpp",
             "int x;  // ../docs/present.md; ../../outside.md\n// shared/reference/one.md\n");
  write_file(root / "tests/three.py", "# ../tests/three.py is fine, " + absolute + " is not\n");
  write_file(root / "tools/run", "#!/bin/sh\n# python/gone.py\nexit 0\n");
  write_file(root / "notes.txt", "# docs/missing.md: not a source file\n");
  write_file(root / "build/CMakeCache.txt", "");
  write_file(root / "build/one.cpp", "// docs/missing.md\n");
  write_file(root / ".hidden/one.cpp", "// docs/missing.md\n");
  write_file(root / ".ci/run", "#!/bin/sh\n# tests/gone.cpp\n");
  std::vector<std::string> found;
  for (const BrokenLink& b : broken_comment_paths(root))
    found.push_back(b.file + ":" + std::to_string(b.line) + " " + b.target);
  EXPECT_EQ(found, (std::vector<std::string>{".ci/run:2 tests/gone.cpp",
                                             "core/one.hpp:1 docs/missing.md",
                                             "tests/three.py:1 " + absolute,
                                             "tools/run:2 python/gone.py",
                                             "tools/two.cpp:1 ../../outside.md",
                                             "tools/two.cpp:2 shared/reference/one.md"}));
  fs::remove_all(root);
}

TEST(DocsLinks, EveryPathInASourceCommentNamesAFileOfTheRepository) {
  const fs::path root = fs::weakly_canonical(SYMMESH_SOURCE_DIR);
  ASSERT_GT(source_files(root).size(), 100u) << "few source files found under " << root;
  const auto broken = broken_comment_paths(root);
  for (const BrokenLink& b : broken) {
    const std::string path = (root / b.file).string();
    ADD_FAILURE_AT(path.c_str(), b.line) << "a comment names '" << b.target << "', which "
                                         << b.why;
  }
  EXPECT_TRUE(broken.empty()) << broken.size() << " path(s) in source comments, listed above";
}
