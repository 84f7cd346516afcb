// torch_shapes.cpp - the inputs of an op with record_shapes: their shapes and dtypes texts
// ("32,784;784,128" / "float;float", as nnp_op_t wants and torch's profiler writes them),
// interned once per distinct inputs' key (kinds, dtypes, sizes as words), and a memo per op
// name of the last few keys it met, compared with the inputs while they are walked (no key
// built or hashed on a hit). Called by the start callback (torch_ops.cpp) for every op while
// inputs are wanted.
#include <ATen/record_function.h>

#include <cstddef>
#include <cstring>

#include "torch_internal.h"

namespace nnp_torch
{

namespace
{

// ---- shapes and dtypes text ("32,784;784,128" / "float;float"), as nnp_op_t wants ----

// Appends s to the buffer; false when it does not fit.
bool put(char *buf, size_t &n, const char *s, size_t len)
{
    if (n + len >= kFmtBytes)
        return false;
    std::memcpy(buf + n, s, len);
    n += len;
    return true;
}

bool put_int(char *buf, size_t &n, int64_t v)
{
    char tmp[24];
    size_t k = 0;
    uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    do {
        tmp[k++] = char('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[k++] = '-';
    if (n + k >= kFmtBytes)
        return false;
    while (k)
        buf[n++] = tmp[--k];
    return true;
}

// Texts of input_type(): named, so that type_word() gives the same addresses.
constexpr char kTypeScalar[] = "Scalar";
constexpr char kTypeIntList[] = "IntList";
constexpr char kTypeNone[] = "";

// Text of one input's type, as torch's profiler names it (profiler/util.cpp inputTypes):
// a tensor's dtype ("float"), "Scalar", or the list kind.
const char *input_type(const c10::IValue &v, size_t *len)
{
    const char *s = kTypeNone;
    if (v.isTensor()) {
        const at::Tensor &t = v.toTensor();
        if (t.defined()) {
            c10::string_view name = t.dtype().name();
            *len = name.size();
            return name.data();
        }
    } else if (v.isScalar()) {
        s = kTypeScalar;
    } else if (v.isList()) {
        // Every typed list is a list: the typed tests (calls into libtorch) run only for
        // lists, not for None or other inputs. A test is quick when the element type is
        // the one asked for and costly otherwise (a comparison of types): int lists (sizes,
        // dims), by far the most frequent, are tested first.
        if (v.isIntList())
            s = kTypeIntList;
        else if (v.isTensorList())
            s = "TensorList";
        else if (v.isDoubleList())
            s = "DoubleList";
        else if (v.isBoolList())
            s = "BoolList";
        else
            s = "GenericList";
    }
    *len = std::strlen(s);
    return s;
}

// The address of input_type()'s text of an input that is not a defined tensor, without a
// call but for lists whose element type is not int (isIntList() tests that kind first; it
// is inline in no header): a scalar, anything else but a list ("": None, an undefined
// tensor, a device), an int list.
inline const char *type_word(const c10::IValue &v)
{
    if (v.isScalar())
        return kTypeScalar;
    if (!v.isList())
        return kTypeNone;
    if (static_cast<const c10::detail::ListImpl *>(v.internalToPointer())->elementType->kind() ==
        c10::TypeKind::IntType)
        return kTypeIntList;
    size_t len;
    return input_type(v, &len);
}

// Interns a formatted text through the thread's cache.
nnp_str_t text_id(ThreadState *ts, size_t n)
{
    NameEntry tmp;
    if (n == 0)
        return 0;
    const NameEntry *e = ts->texts.get(ts->fmt, n, 0, &tmp);
    return e->type;
}

// Formats the shapes and dtypes texts of the inputs and interns them.
InputIds format_inputs(ThreadState *ts, c10::ArrayRef<const c10::IValue> in)
{
    char *b = ts->fmt;
    size_t n = 0;
    bool ok = true;
    // Shapes: one field per input, dims joined by ','; non-tensors leave an empty field
    // (torch's "Input Dims" gives them []).
    for (size_t i = 0; i < in.size() && ok; i++) {
        if (i)
            ok = put(b, n, ";", 1);
        if (in[i].isTensor() && in[i].toTensor().defined()) {
            c10::IntArrayRef sizes = in[i].toTensor().sizes();
            for (size_t d = 0; d < sizes.size() && ok; d++) {
                if (d)
                    ok = put(b, n, ",", 1);
                ok = ok && put_int(b, n, sizes[d]);
            }
        }
    }
    // Inputs all without shape (e.g. a scalar-only op) still say how many there were.
    InputIds ids;
    ids.shapes = ok ? text_id(ts, n) : 0;
    n = 0;
    ok = true;
    for (size_t i = 0; i < in.size() && ok; i++) {
        size_t len = 0;
        const char *t = input_type(in[i], &len);
        if (i)
            ok = put(b, n, ";", 1);
        ok = ok && put(b, n, t, len);
    }
    ids.dtypes = ok ? text_id(ts, n) : 0;
    return ids;
}

// What decides the two texts of the inputs, as words. Per input one head word, then for a
// defined tensor its sizes:
//  * a defined tensor whose dtype is a scalar type (read inline; TypeMeta::name() is a
//    call into c10): kTensorBit | scalar type << kDtypeShift | number of dims;
//  * a defined tensor of another dtype: kTensorBit | kNamedDtypeBit | number of dims, then
//    the address of its dtype's name (static, one per type);
//  * anything else: the address of input_type()'s text (type_word()). No user-space
//    address has bit 63 set (x86-64 and AArch64 give user space the lower half), so it is
//    never a tensor's head.
// Each word goes to put(word), in order; the walk stops (false) as soon as room(k) (room
// for k more words) or put returns false.
template <typename Room, typename Put>
__attribute__((always_inline)) inline bool walk_inputs(c10::ArrayRef<const c10::IValue> in,
                                                       Room room, Put put)
{
    constexpr uint64_t kTensorBit = uint64_t(1) << 63, kNamedDtypeBit = uint64_t(1) << 62;
    constexpr int kDtypeShift = 32;
    for (const c10::IValue &v : in) {
        if (v.isTensor() && v.toTensor().defined()) {
            const at::Tensor &t = v.toTensor();
            c10::IntArrayRef sizes = t.sizes();
            caffe2::TypeMeta m = t.dtype();
            if (__builtin_expect(m.isScalarType(), 1)) {
                if (!room(1 + sizes.size()) ||
                    !put(kTensorBit | uint64_t(uint8_t(m.toScalarType())) << kDtypeShift |
                         uint64_t(sizes.size())))
                    return false;
            } else if (!room(2 + sizes.size()) ||
                       !put(kTensorBit | kNamedDtypeBit | uint64_t(sizes.size())) ||
                       !put(reinterpret_cast<uintptr_t>(m.name().data()))) {
                return false;
            }
            for (int64_t d : sizes) {
                if (!put(uint64_t(d)))
                    return false;
            }
        } else if (!room(1) || !put(reinterpret_cast<uintptr_t>(type_word(v)))) {
            return false;
        }
    }
    return true;
}

// The inputs' key (walk_inputs) into key: its number of words, 0 when they do not fit.
size_t inputs_key(c10::ArrayRef<const c10::IValue> in, uint64_t *key)
{
    size_t n = 0;
    bool ok = walk_inputs(
        in, [&](size_t k) { return n + k <= kKeyWords; },
        [&](uint64_t w) {
            key[n++] = w;
            return true;
        });
    return ok ? n : 0;
}

// Whether the inputs' key is the given one (any alignment), the key of n_inputs inputs,
// compared while the inputs are walked: no key built, no hash. No bound is tested per
// word: with as many inputs, the walk stays inside the key as long as it matches (an
// input's head word, compared first, gives its number of words).
inline bool inputs_are(c10::ArrayRef<const c10::IValue> in, const char *key, size_t n_inputs)
{
    if (in.size() != n_inputs)
        return false;
    const char *k = key;
    return walk_inputs(
        in, [](size_t) { return true; },
        [&](uint64_t w) {
            uint64_t x;
            std::memcpy(&x, k, sizeof(x));
            k += sizeof(x);
            return x == w;
        });
}

// The memo slot of an op name id: its low bits. Ids are given in sequence (1, 2, ...,
// strtab.h), so the names of a model, interned close together, share no slot (a hash
// would make a few of its ~50-300 names share one and evict each other on every call).
inline InputsMemo &memo_of(ThreadState *ts, nnp_str_t name)
{
    static_assert((kMemoSlots & (kMemoSlots - 1)) == 0, "kMemoSlots: a power of 2");
    return ts->memo[name & (kMemoSlots - 1)];
}

} // namespace

// Shapes and dtypes ids of the op's inputs. An op meets the same few input shapes step
// after step: the inputs are first compared with the last ones its name met (the memo);
// else the texts are formatted and interned once per distinct key (inputs_key), later
// calls only build the key and look it up.
// Not inlined: the start callback's common path then saves fewer registers.
__attribute__((noinline)) InputIds fill_shapes(ThreadState *ts, const at::RecordFunction &fn,
                                               nnp_str_t name)
{
    c10::ArrayRef<const c10::IValue> in = fn.inputs();
    InputsMemo &m = memo_of(ts, name);
    if (m.name == name) {
        size_t w = m.ways[m.last].next;
        for (size_t k = 0; k < kMemoWays; k++, w = (w + 1) % kMemoWays) {
            const InputsMemo::Way &y = m.ways[w];
            if (y.key && inputs_are(in, y.key, y.inputs)) {
                m.ways[m.last].next = uint8_t(w);
                m.last = uint8_t(w);
                return InputIds{y.shapes, y.dtypes};
            }
        }
    } else {
        m = InputsMemo{};
        m.name = name;
    }
    size_t words = inputs_key(in, ts->key);
    const NameEntry *e = nullptr;
    InputIds ids{};
    if (words) {
        e = ts->inputs.find_key(ts->key, words);
        if (e)
            ids = InputIds{e->id, e->type};
    }
    if (!e) {
        ids = format_inputs(ts, in);
        if (words)
            e = ts->inputs.put_key(ts->key, words, ids.shapes, ids.dtypes);
    }
    if (e) {
        size_t w = m.fill;
        m.fill = uint8_t((w + 1) % kMemoWays);
        m.ways[w] = InputsMemo::Way{e->str, uint32_t(in.size()), e->id, e->type, uint8_t(w)};
        m.ways[m.last].next = uint8_t(w);
        m.last = uint8_t(w);
    }
    return ids;
}

} // namespace nnp_torch
