/* json_simdjson.cpp - simdjson's on-demand API behind a C interface, for bench_import's
 * "same files, same run" comparison of JSON front ends (issue 17). Each scan fetches the
 * fields an importer reads from every Chrome-trace event (name, ph, pid, tid, ts, dur and
 * every args member) and folds them into a checksum, so no work can be optimised away.
 * Two ways: the whole document in memory (simdjson's natural use: the file plus padding
 * held at once), and one event at a time (json_bench_element: the caller cuts events, as
 * a streaming importer must, and each is copied into a padded buffer). */
#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "json_simdjson.h"

using namespace simdjson;

namespace
{

/* Folds a value's bytes or number into the checksum. */
void fold(uint64_t &sum, std::string_view s)
{
    for (char c : s)
        sum = sum * 31 + static_cast<unsigned char>(c);
}

int scan_object(ondemand::object obj, uint64_t &sum)
{
    for (auto field : obj) {
        std::string_view key;
        if (field.unescaped_key().get(key))
            return -1;
        fold(sum, key);
        ondemand::value v = field.value();
        ondemand::json_type t;
        if (v.type().get(t))
            return -1;
        switch (t) {
        case ondemand::json_type::string: {
            std::string_view s;
            if (v.get_string().get(s))
                return -1;
            fold(sum, s);
            break;
        }
        case ondemand::json_type::number: {
            double d;
            if (v.get_double().get(d))
                return -1;
            sum += static_cast<uint64_t>(d);
            break;
        }
        case ondemand::json_type::object: {
            ondemand::object o;
            if (v.get_object().get(o) || scan_object(o, sum) != 0)
                return -1;
            break;
        }
        case ondemand::json_type::array:
            fold(sum, "array"); /* as bench_import.c's fields(): skipped, not walked */
            break;
        default:
            fold(sum, "literal");
            break;
        }
    }
    return 0;
}

} // namespace

#define NNP_STR2(x) #x
#define NNP_STR(x)  NNP_STR2(x)

/* The kernel compiled into this file (the library's builtin_implementation() says what
 * the shared library itself was built for, not what the inlined on-demand code uses). */
extern "C" const char *json_bench_simdjson_kernel(void)
{
    return NNP_STR(SIMDJSON_BUILTIN_IMPLEMENTATION);
}

extern "C" int json_bench_simdjson_doc(const char *path, uint64_t *events, uint64_t *sum)
{
    padded_string json;
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::array arr;
    *events = 0;
    *sum = 0;
    if (padded_string::load(path).get(json) || parser.iterate(json).get(doc) ||
        doc.get_array().get(arr))
        return -1;
    for (auto ev : arr) {
        ondemand::object obj;
        if (ev.get_object().get(obj) || scan_object(obj, *sum) != 0)
            return -1;
        (*events)++;
    }
    return 0;
}

struct json_bench_parser {
    ondemand::parser parser;
    std::string buf;
};

extern "C" json_bench_parser_t *json_bench_parser_new(void)
{
    return new (std::nothrow) json_bench_parser();
}

extern "C" void json_bench_parser_free(json_bench_parser_t *p)
{
    delete p;
}

extern "C" int json_bench_element(json_bench_parser_t *p, const char *text, size_t n, uint64_t *sum)
{
    ondemand::document doc;
    ondemand::object obj;
    p->buf.assign(text, n);
    p->buf.append(SIMDJSON_PADDING, '\0');
    padded_string_view view(p->buf.data(), n, p->buf.size());
    if (p->parser.iterate(view).get(doc) || doc.get_object().get(obj))
        return -1;
    return scan_object(obj, *sum);
}
