// torch_stacks.cpp - with_stack: the Python stack each op is called from, named as
// torch.profiler's Python tracer names its frames (torch 1.13, checked against its own
// profiles in python/tests/test_torch_stacks.py):
//  * a Python function entered while profiling: "<file>(<first line of the function>):
//    <name>", the file without the longest sys.path / site-packages prefix
//    (torch.profiler.python_tracer._prefix_regex, handed over by nnprof.torch);
//  * a frame already running when profiling began: the same with its current line;
//  * a call of an nn.Module (Module._call_impl's frame): "nn.Module: <Class>_<k>", k
//    counting the modules of that class in the order they were first called;
//  * a builtin (C) function: its repr(), "<built-in method relu of type object at 0x...>".
// A profile function (PyEval_SetProfile) on every Python thread keeps each thread's chain
// of these frames as nodes of one tree; each node holds the interned text of its whole
// stack, innermost frame first, '\n' between frames (nnp_op_t.stack). The op callbacks
// (torch_ops.cpp) read the text id of their own thread's innermost node: no lock, no
// Python call, whether or not the thread holds the GIL (torch releases it around ops).
// Everything else here runs with the GIL held: the tree is only changed under it.
// Built only with Python's headers (NNP_TORCH_HAVE_PYTHON); the shim is loaded into
// Python processes only (nnprof.torch, the NNPROF_TORCH=1 start-up hook), which provide
// Python's symbols.
#include "torch_internal.h"

#if NNP_TORCH_HAVE_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nnp_torch
{

namespace
{

constexpr size_t kMaxPyDepth = 256;   // frames kept per thread; deeper ones share the 256th
constexpr size_t kMaxNodes = 1 << 16; // distinct (stack, frame) pairs; later ones share their
                                      // parent's node (each holds its stack's text)
constexpr const char *kCapsuleName = "nnprof.torch.stacks";

// A thread's chain of frames: node ids, innermost last, and the text id of each node's
// stack. Written by the thread's own profile function, read by its op callbacks.
struct ThreadStack {
    uint64_t gen = 0; // the generation it was made for (a stale one reads as no stack)
    size_t depth = 0; // frames entered and not left (may pass kMaxPyDepth)
    uint32_t node[kMaxPyDepth] = {};
    nnp_str_t text[kMaxPyDepth] = {};
};

// What makes a node: its parent, the frame's kind and what names it.
enum FrameKind : uint8_t { FRAME_PY, FRAME_PY_START, FRAME_MODULE, FRAME_C };
struct Key {
    uint32_t parent;
    uint8_t kind;
    uintptr_t a, b, c;
    bool operator==(const Key &o) const
    {
        return parent == o.parent && kind == o.kind && a == o.a && b == o.b && c == o.c;
    }
};
struct KeyHash {
    size_t operator()(const Key &k) const
    {
        constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
        uint64_t h = (uint64_t(k.parent) << 8 | k.kind) * kMul;
        h = (h ^ k.a) * kMul;
        h = (h ^ k.b) * kMul;
        return size_t((h ^ k.c) * kMul);
    }
};

struct Node {
    std::string text; // the whole stack, innermost frame first
    nnp_str_t id;     // its interned id
};

// The tree and what names its frames; changed with the GIL held only.
struct Tree {
    std::vector<Node> nodes; // 0: the empty stack
    std::unordered_map<Key, uint32_t, KeyHash> index;
    std::vector<std::string> prefixes; // file prefixes, in torch's order: the first
                                       // that starts a file is cut
    PyObject *module_call = nullptr;   // Module._call_impl's code object
    std::unordered_map<PyObject *, uint32_t> module_no; // module -> k of "<Class>_<k>"
    std::unordered_map<std::string, uint32_t> class_count;
    std::vector<PyObject *> held; // references that keep the keys' objects alive
};

Tree *g_tree = nullptr;         // NULL while no profiler wants stacks
std::atomic<uint64_t> g_gen{0}; // bumped by every start and stop
std::atomic<bool> g_active{false};
// Every ThreadStack made, with its generation: freed two generations later (an op
// callback that loaded one just before a stop is done with it by then).
std::vector<std::unique_ptr<ThreadStack>> g_stacks;

__thread ThreadStack *t_stack = nullptr;

std::string utf8(PyObject *s)
{
    const char *c = s ? PyUnicode_AsUTF8(s) : nullptr;
    if (!c) {
        PyErr_Clear();
        return std::string();
    }
    return std::string(c);
}

std::string trim_prefix(const std::string &file)
{
    for (const std::string &p : g_tree->prefixes) {
        if (file.compare(0, p.size(), p) == 0)
            return file.substr(p.size());
    }
    return file;
}

// The node of frame text t under parent for key k, made when new.
uint32_t node_for(const Key &k, const std::string &t)
{
    Tree &tr = *g_tree;
    auto it = tr.index.find(k);
    if (it != tr.index.end())
        return it->second;
    if (tr.nodes.size() >= kMaxNodes) {
        g_counters.stack_nodes_capped.fetch_add(1, std::memory_order_relaxed);
        return k.parent;
    }
    Node n;
    n.text = t;
    if (k.parent) {
        n.text += '\n';
        n.text += tr.nodes[k.parent].text;
    }
    n.id = nnp_intern(n.text.c_str());
    uint32_t id = uint32_t(tr.nodes.size());
    tr.nodes.push_back(std::move(n));
    tr.index.emplace(k, id);
    return id;
}

void hold(PyObject *o)
{
    Py_INCREF(o);
    g_tree->held.push_back(o);
}

// The node of a Python frame under parent: a function entered now (its first line), one
// running since before the start (its current line), or a module's call.
uint32_t frame_node(uint32_t parent, PyFrameObject *frame, bool running)
{
    PyCodeObject *code = PyFrame_GetCode(frame); // new reference
    uint32_t id;
    if ((PyObject *)code == g_tree->module_call) {
        PyObject *locals = PyFrame_GetLocals(frame);
        PyObject *self = locals ? PyDict_GetItemString(locals, "self") : nullptr;
        if (!self) {
            PyErr_Clear();
            id = parent;
        } else {
            Key k{parent, FRAME_MODULE, uintptr_t(self), 0, 0};
            auto no = g_tree->module_no.find(self);
            uint32_t n;
            std::string cls = Py_TYPE(self)->tp_name;
            size_t dot = cls.rfind('.');
            if (dot != std::string::npos)
                cls = cls.substr(dot + 1);
            if (no == g_tree->module_no.end()) {
                n = g_tree->class_count[cls]++;
                g_tree->module_no.emplace(self, n);
                hold(self);
            } else {
                n = no->second;
            }
            id = node_for(k, "nn.Module: " + cls + "_" + std::to_string(n));
        }
        Py_XDECREF(locals);
    } else {
        int line = running ? PyFrame_GetLineNumber(frame) : code->co_firstlineno;
        Key k{parent, running ? FRAME_PY_START : FRAME_PY, uintptr_t(code), 0, uintptr_t(line)};
        auto it = g_tree->index.find(k);
        if (it != g_tree->index.end()) {
            id = it->second;
        } else {
            hold((PyObject *)code);
            id = node_for(k, trim_prefix(utf8(code->co_filename)) + "(" + std::to_string(line) +
                                 "): " + utf8(code->co_name));
        }
    }
    Py_DECREF(code);
    return id;
}

// The node of a call of builtin fn under parent: its repr() names it. A builtin function
// or method is known by its definition and the object it is bound to (whose type and
// address its repr shows), any other callable by itself.
uint32_t c_node(uint32_t parent, PyObject *fn)
{
    Key k{parent, FRAME_C, uintptr_t(fn), 0, 0};
    if (PyCFunction_Check(fn)) {
        PyObject *self = PyCFunction_GET_SELF(fn);
        k.a = uintptr_t(((PyCFunctionObject *)fn)->m_ml);
        k.b = uintptr_t(self);
        k.c = self ? uintptr_t(Py_TYPE(self)) : 0;
    }
    auto it = g_tree->index.find(k);
    if (it != g_tree->index.end())
        return it->second;
    if (!PyCFunction_Check(fn))
        hold(fn);
    PyObject *r = PyObject_Repr(fn);
    std::string text = utf8(r);
    Py_XDECREF(r);
    if (!r)
        PyErr_Clear();
    return node_for(k, text);
}

void push(ThreadStack *s, uint32_t node)
{
    if (s->depth < kMaxPyDepth) {
        s->node[s->depth] = node;
        s->text[s->depth] = g_tree->nodes[node].id;
    }
    s->depth++;
}

uint32_t top_node(const ThreadStack *s)
{
    if (s->depth == 0)
        return 0;
    return s->node[(s->depth < kMaxPyDepth ? s->depth : kMaxPyDepth) - 1];
}

int on_py_event(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    ThreadStack *s = t_stack;
    if (!s || s->gen != g_gen.load(std::memory_order_relaxed)) {
        s = static_cast<ThreadStack *>(PyCapsule_GetPointer(obj, kCapsuleName));
        if (!s) {
            PyErr_Clear();
            return 0;
        }
        t_stack = s;
    }
    if (!g_tree)
        return 0;
    switch (what) {
    case PyTrace_CALL:
        push(s, frame_node(top_node(s), frame, false));
        break;
    case PyTrace_C_CALL:
        push(s, c_node(top_node(s), arg));
        break;
    case PyTrace_RETURN:
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
        if (s->depth > 0)
            s->depth--;
        break;
    default:
        break;
    }
    return 0;
}

// Starts the profile function on thread state ts (the GIL held): its frames running now,
// less the skip innermost ones, are the bottom of its stack. False when out of memory.
bool start_thread(PyThreadState *ts, uint64_t gen, size_t skip)
{
    std::unique_ptr<ThreadStack> s(new (std::nothrow) ThreadStack());
    if (!s)
        return false;
    s->gen = gen;
    std::vector<PyFrameObject *> frames; // innermost first, new references
    PyFrameObject *f = PyThreadState_GetFrame(ts);
    while (f) {
        PyFrameObject *back = PyFrame_GetBack(f);
        if (skip > 0) {
            skip--;
            Py_DECREF(f);
        } else {
            frames.push_back(f);
        }
        f = back;
    }
    for (size_t i = frames.size(); i-- > 0;)
        push(s.get(), frame_node(top_node(s.get()), frames[i], true));
    for (PyFrameObject *frame : frames)
        Py_DECREF(frame);
    PyObject *cap = PyCapsule_New(s.get(), kCapsuleName, nullptr); // g_stacks owns s
    if (!cap) {
        PyErr_Clear();
        return false;
    }
    PyThreadState *was = PyThreadState_Swap(ts);
    PyEval_SetProfile(on_py_event, cap);
    PyThreadState_Swap(was);
    Py_DECREF(cap); // the thread state holds it
    g_stacks.push_back(std::move(s));
    return true;
}

void stop_all_threads()
{
    PyInterpreterState *in = PyThreadState_GetInterpreter(PyThreadState_Get());
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(in); ts; ts = PyThreadState_Next(ts)) {
        PyThreadState *was = PyThreadState_Swap(ts);
        PyEval_SetProfile(nullptr, nullptr);
        PyThreadState_Swap(was);
    }
}

void free_tree()
{
    if (!g_tree)
        return;
    for (PyObject *o : g_tree->held)
        Py_DECREF(o);
    Py_XDECREF(g_tree->module_call);
    delete g_tree;
    g_tree = nullptr;
}

// Frees the thread stacks made before generation gen - 1.
void free_old_stacks(uint64_t gen)
{
    size_t w = 0;
    for (size_t r = 0; r < g_stacks.size(); r++) {
        if (g_stacks[r]->gen + 1 >= gen)
            g_stacks[w++] = std::move(g_stacks[r]);
    }
    g_stacks.resize(w);
}

} // namespace

bool stacks_active()
{
    return g_active.load(std::memory_order_relaxed);
}

nnp_str_t stacks_current()
{
    const ThreadStack *s = t_stack;
    if (!s || s->gen != g_gen.load(std::memory_order_relaxed) || s->depth == 0)
        return 0;
    return s->text[(s->depth < kMaxPyDepth ? s->depth : kMaxPyDepth) - 1];
}

} // namespace nnp_torch

using namespace nnp_torch;

#define NNP_TORCH_API extern "C" __attribute__((visibility("default")))

// Called through ctypes.PyDLL (the GIL held). module_call: Module._call_impl's code object;
// prefixes: a list of str, the file prefixes to cut. Starts the profile function on every
// thread of the interpreter and re-installs the op callbacks. NNP_OK, NNP_EINVAL (not a
// code object or list), NNP_ENOMEM.
NNP_TORCH_API int nnp_torch_stacks_start(PyObject *module_call, PyObject *prefixes)
{
    if (!module_call || !PyCode_Check(module_call) || !prefixes || !PyList_Check(prefixes))
        return NNP_EINVAL;
    if (g_tree) {
        stop_all_threads();
        free_tree();
    }
    g_tree = new (std::nothrow) Tree();
    if (!g_tree)
        return NNP_ENOMEM;
    g_tree->nodes.push_back(Node{std::string(), 0});
    Py_INCREF(module_call);
    g_tree->module_call = module_call;
    for (Py_ssize_t i = 0; i < PyList_Size(prefixes); i++)
        g_tree->prefixes.push_back(utf8(PyList_GetItem(prefixes, i)));
    uint64_t gen = g_gen.fetch_add(1) + 1;
    free_old_stacks(gen);
    PyInterpreterState *in = PyThreadState_GetInterpreter(PyThreadState_Get());
    bool ok = true;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(in); ts && ok;
         ts = PyThreadState_Next(ts))
        ok = start_thread(ts, gen, 0);
    if (!ok) {
        stop_all_threads();
        free_tree();
        g_gen.fetch_add(1);
        return NNP_ENOMEM;
    }
    g_active.store(true);
    ops_reinstall();
    return NNP_OK;
}

// Called through ctypes.PyDLL by a thread started after nnp_torch_stacks_start, from
// the Python profile function threading.setprofile gave it (nnprof.torch's
// _thread_hook): the shim's profile function replaces it; the hook's own frame, which
// no event will close, is left out. NNP_OK, or NNP_ENOMEM; nothing when stacks are not
// wanted.
NNP_TORCH_API int nnp_torch_stacks_thread(void)
{
    if (!g_tree)
        return NNP_OK;
    return start_thread(PyThreadState_Get(), g_gen.load(), 1) ? NNP_OK : NNP_ENOMEM;
}

// Called through ctypes.PyDLL: removes every profile function and forgets the tree (the
// texts stay interned); ops recorded from now on have no stack.
NNP_TORCH_API void nnp_torch_stacks_stop(void)
{
    if (!g_tree)
        return;
    g_active.store(false);
    g_gen.fetch_add(1);
    stop_all_threads();
    free_tree();
    ops_reinstall();
}

#else // !NNP_TORCH_HAVE_PYTHON

namespace nnp_torch
{
bool stacks_active()
{
    return false;
}
nnp_str_t stacks_current()
{
    return 0;
}
} // namespace nnp_torch

#endif
