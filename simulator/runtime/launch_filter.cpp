// Which launches a checker checks, as compute-sanitizer's --kernel-name, --kernel-name-exclude,
// --launch-skip and --launch-count choose them (`run` passes them on as SIMULATOR_KERNEL_NAME,
// SIMULATOR_KERNEL_NAME_EXCLUDE, SIMULATOR_LAUNCH_SKIP and SIMULATOR_LAUNCH_COUNT). A filter is
// one line "KEY<TAB>VALUE" per pattern: kne (the whole kernel name), kns (a substring of it) or
// regex (an ECMAScript expression found in it). Names are the ones reports print: the kernel as
// the launch names it, template arguments included. A launch is counted when it matches the
// filters, in the order the runtime starts launches; skip and count then pick the checked ones.
#include "sim_internal.h"

#include <cstdlib>
#include <cstring>
#include <regex>

namespace __sim {
namespace {

struct Pattern {
    enum Kind { kWhole, kSubstring, kRegex } kind;
    std::string text;
    std::regex re;
};

struct LaunchFilter {
    bool any = false;  // some variable is set: launches are counted
    std::vector<Pattern> include, exclude;
    unsigned long long skip = 0, count = 0;  // count 0: every launch after the skipped ones
    std::atomic<unsigned long long> matched{0};
};

// The patterns of ``var`` into ``out``; false (and a report naming the variable) for a bad one.
bool read_patterns(const char* var, std::vector<Pattern>* out) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') return true;
    const char* p = v;
    while (*p != '\0') {
        const char* end = std::strchr(p, '\n');
        std::string line = end == nullptr ? std::string(p) : std::string(p, end);
        p = end == nullptr ? p + line.size() : end + 1;
        if (line.empty()) continue;
        const size_t tab = line.find('\t');
        const std::string key = line.substr(0, tab);
        Pattern pat{Pattern::kWhole, tab == std::string::npos ? "" : line.substr(tab + 1), std::regex()};
        if (key == "kns") {
            pat.kind = Pattern::kSubstring;
        } else if (key == "regex") {
            pat.kind = Pattern::kRegex;
            try {
                pat.re = std::regex(pat.text, std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
                report("%s: '%s' is not a regular expression (%s): every launch is checked", var,
                       pat.text.c_str(), e.what());
                return false;
            }
        } else if (key != "kne" || tab == std::string::npos) {
            report("%s: '%s' is not KEY<TAB>VALUE with KEY kne, kns or regex: every launch is checked", var,
                   line.c_str());
            return false;
        }
        out->push_back(std::move(pat));
    }
    return true;
}

// A whole number from ``var`` (0 when unset); false (and a report) for anything else.
bool read_count(const char* var, unsigned long long* out) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') return true;
    char* end = nullptr;
    *out = std::strtoull(v, &end, 10);
    if (*v == '-' || *end != '\0') {
        report("%s='%s' is not a whole number: every launch is checked", var, v);
        return false;
    }
    return true;
}

LaunchFilter* load_filter() {
    auto* f = new LaunchFilter;
    const char* vars[] = {"SIMULATOR_KERNEL_NAME", "SIMULATOR_KERNEL_NAME_EXCLUDE", "SIMULATOR_LAUNCH_SKIP",
                          "SIMULATOR_LAUNCH_COUNT"};
    for (const char* var : vars) {
        const char* v = std::getenv(var);
        f->any = f->any || (v != nullptr && *v != '\0');
    }
    if (!f->any) return f;
    const bool ok = read_patterns(vars[0], &f->include) && read_patterns(vars[1], &f->exclude) &&
                    read_count(vars[2], &f->skip) && read_count(vars[3], &f->count);
    if (!ok) f->any = false;
    return f;
}

bool matches(const Pattern& p, const char* name) {
    switch (p.kind) {
        case Pattern::kWhole:
            return p.text == name;
        case Pattern::kSubstring:
            return std::strstr(name, p.text.c_str()) != nullptr;
        case Pattern::kRegex:
            return std::regex_search(name, p.re);
    }
    return false;
}

bool matches_any(const std::vector<Pattern>& ps, const char* name) {
    for (const Pattern& p : ps) {
        if (matches(p, name)) return true;
    }
    return false;
}

}  // namespace

bool launch_checked(const char* name) {
    static LaunchFilter* const f = load_filter();  // never freed: launches may run at exit
    if (!f->any) return true;
    if (!f->include.empty() && !matches_any(f->include, name)) return false;
    if (matches_any(f->exclude, name)) return false;
    const unsigned long long n = f->matched.fetch_add(1);  // launches before this one that matched
    return n >= f->skip && (f->count == 0 || n - f->skip < f->count);
}

}  // namespace __sim
// sim-runtime: cold
