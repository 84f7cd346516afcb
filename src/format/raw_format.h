/* raw_format.h - the on-disk raw format shared by the recorder (write side) and the reader.
 *
 * Both layers include this file and nothing of each other: the reader depends only on the
 * format, which is what lets offline analysis work after a crash. docs/FORMAT.md is the
 * prose version of this header; keep them in step (bump NNP_RAW_VERSION on any change an
 * older reader would misread; a value in a reserved field, zeroed by every writer, is none).
 * All integers are little-endian; the writer refuses to run on a big-endian host.
 */
#ifndef NNP_RAW_FORMAT_H
#define NNP_RAW_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* File header: 32 bytes at offset 0 of every raw file. */
#define NNP_RAW_MAGIC     "NNPRAW1\n" /* 8 bytes; the '\n' catches text-mode damage */
#define NNP_RAW_MAGIC_LEN 8
/* Version 2 added KERNEL's launch and copy slots, COMM's detail slot and the CALL and
 * COMM_GROUP kinds; a version 1 reader would take those records for damage, so it must
 * refuse the files instead. Version 3 added codec NNP_CODEC_PACK for RECORDS chunks, which
 * a version 2 reader cannot decode. Version 4 added the one-slot OP_BRIEF kind, which a
 * version 3 reader would take for damage. */
#define NNP_RAW_VERSION     4
#define NNP_RAW_ENDIAN_MARK 0x01020304u

/* Oldest version the reader still reads: v2 and v4 only added kinds and flags, v3 a codec
 * (docs/FORMAT.md). */
#define NNP_RAW_VERSION_MIN 1

typedef struct nnp_raw_file_header {
    char magic[NNP_RAW_MAGIC_LEN];
    uint32_t version;      /* NNP_RAW_VERSION */
    uint32_t header_bytes; /* sizeof(nnp_raw_file_header_t), lets v2 grow the header */
    uint32_t endian_mark;  /* NNP_RAW_ENDIAN_MARK as written by the host */
    uint32_t slot_bytes;   /* sizeof(nnp_rec_t) */
    uint32_t file_kind;    /* NNP_FILE_META or NNP_FILE_DATA */
    uint32_t file_seq;     /* data file number, 0 for the meta file */
} nnp_raw_file_header_t;
_Static_assert(sizeof(nnp_raw_file_header_t) == 32, "file header is 32 bytes");

enum { NNP_FILE_META = 1, NNP_FILE_DATA = 2 };

/* Chunk header: 48 bytes, then payload_bytes of payload (compressed when codec != 0).
 * header_crc covers the 44 bytes before it, so a damaged length is never trusted. */
#define NNP_CHUNK_MAGIC 0x4B48434Eu /* "NCHK" read as little-endian bytes */

typedef struct nnp_chunk_header {
    uint32_t magic;         /* NNP_CHUNK_MAGIC */
    uint16_t type;          /* nnp_chunk_type_t */
    uint16_t codec;         /* nnp_codec_t */
    uint32_t payload_bytes; /* bytes following this header */
    uint32_t raw_bytes;     /* payload size after decompression */
    uint32_t payload_crc;   /* CRC-32C of the payload bytes as stored */
    uint32_t count;         /* records (RECORDS), strings (STRINGS), entries (others) */
    uint64_t seq;           /* global chunk sequence number of the session, from 1 */
    uint64_t tid;           /* OS thread id for RECORDS chunks, 0 otherwise */
    uint32_t reserved;      /* 0 */
    uint32_t header_crc;    /* CRC-32C of the 44 bytes above */
} nnp_chunk_header_t;
_Static_assert(sizeof(nnp_chunk_header_t) == 48, "chunk header is 48 bytes");

/* Upper bound of a chunk's decompressed payload: the reader rejects larger claims before
 * allocating (a flipped bit must not make it allocate gigabytes). 64 MiB is 16x the
 * default per-thread buffer, the largest batch the writer ever forms. */
#define NNP_CHUNK_MAX_RAW_BYTES (64u * 1024u * 1024u)

/* Largest string id a run holds: the recorder's intern table stops at this many strings
 * (record/strtab.h), and the reader refuses a larger id before it sizes its array of
 * strings by id (a flipped bit then costs at most this many pointers). */
#define NNP_RAW_MAX_STRING_ID (4u * 1024u * 1024u)

typedef enum nnp_chunk_type {
    NNP_CHUNK_RECORDS = 1, /* nnp_rec_t slots of one thread */
    NNP_CHUNK_STRINGS = 2, /* repeated {u32 id, u32 len, len bytes, pad to 4} */
    NNP_CHUNK_THREADS = 3, /* repeated {u64 tid, u32 name id, u32 pid} */
    NNP_CHUNK_CLOCK = 4,   /* repeated nnp_clock_point_t */
    NNP_CHUNK_LOSS = 5,    /* repeated {u64 tid, u64 dropped} since the previous LOSS */
    NNP_CHUNK_AGED = 6     /* repeated {u32 file_seq, u32 0, u64 bytes}: data files deleted
                            * by storage_limit, oldest first */
} nnp_chunk_type_t;

/* X-macro: codec, number, name (as `nnprof dump` prints it). PACK (v3) is the per-field
 * delta encoding of format/rec_pack.h, for RECORDS chunks only; raw_bytes is then the
 * size of the slots it unpacks to. */
#define NNP_CODEC_MAP(XX)                                                                          \
    XX(NONE, 0, "none")                                                                            \
    XX(ZSTD, 1, "zstd")                                                                            \
    XX(PACK, 2, "pack")

typedef enum nnp_codec {
#define NNP_CODEC_ENUM_(c, num, text) NNP_CODEC_##c = (num),
    NNP_CODEC_MAP(NNP_CODEC_ENUM_)
#undef NNP_CODEC_ENUM_
        NNP_CODEC_COUNT
} nnp_codec_t;

/* Name of a codec ("pack") or NULL when unknown. */
const char *nnp__codec_name(unsigned codec);

/* A pairing of the tick counter with CLOCK_MONOTONIC and CLOCK_REALTIME. The reader
 * converts ticks to ns by interpolating between consecutive points. */
typedef struct nnp_clock_point {
    uint64_t ticks;
    uint64_t mono_ns;
    uint64_t wall_ns;
    uint64_t ticks_per_sec; /* nominal rate of the tick source (1e9 for a ns clock) */
} nnp_clock_point_t;
_Static_assert(sizeof(nnp_clock_point_t) == 32, "clock point is 32 bytes");

/* ---------------------------------------------------------------------------------------
 * Records. Every record starts with one 32-byte slot; kinds with more payload take 1-2
 * extension slots right after it (n_slots counts all of them). Fixed-size slots keep the
 * hot path a handful of stores (Tracy) while allowing bigger payloads.
 * ------------------------------------------------------------------------------------- */

typedef struct nnp_rec {
    uint8_t kind;    /* nnp_rec_kind_t */
    uint8_t n_slots; /* 1..NNP_REC_MAX_SLOTS, this slot included */
    uint16_t flags;  /* NNP_REC_F_* */
    uint32_t name;   /* string id, meaning per kind */
    uint64_t ts;     /* ticks, or ns when NNP_REC_F_TS_NS */
    uint64_t a;      /* per kind */
    uint64_t b;      /* per kind */
} nnp_rec_t;
_Static_assert(sizeof(nnp_rec_t) == 32, "a record slot is 32 bytes");

#define NNP_REC_MAX_SLOTS 3

/* ts (and any end time in the record) is CLOCK_MONOTONIC ns, not raw ticks. */
#define NNP_REC_F_TS_NS 0x0001u
/* OP: a third slot follows (nnp_rec_flops_t: FLOPs and the op's stack). */
#define NNP_REC_F_FLOPS 0x0002u
/* KERNEL (v2): a third slot with the launch configuration (nnp_rec_launch_t) follows. */
#define NNP_REC_F_LAUNCH 0x0004u
/* KERNEL (v2): a third slot describing a device copy or memory set (nnp_rec_copy_t). */
#define NNP_REC_F_COPY 0x0008u
/* COMM (v2): a third slot with details follows (nnp_rec_comm_detail_t). Flags are unique
 * across kinds so a flag never means two things. */
#define NNP_REC_F_COMM_DETAIL 0x0010u
/* OP (v2): seq_thread and sequence_nr of the extension slot hold an autograd link;
 * OP_BRIEF (v4): b holds it (NNP_REC_BRIEF_*). */
#define NNP_REC_F_SEQ 0x0020u
/* OP, OP_BRIEF: a backward op (with NNP_REC_F_SEQ: seq_thread is its forward op's thread;
 * an OP without it: a backward op with no autograd link, such as AccumulateGrad). */
#define NNP_REC_F_BACKWARD 0x0040u

/* X-macro: kind, number, slots, name. The per-kind field meaning is in the comments of
 * the payload structs below and in docs/FORMAT.md. */
#define NNP_REC_KIND_MAP(XX)                                                                       \
    XX(RANGE_BEGIN, 1, 1, "range_begin")                                                           \
    XX(RANGE_END, 2, 1, "range_end")                                                               \
    XX(INSTANT, 3, 1, "instant")                                                                   \
    XX(HOST_MEM, 4, 1, "host_memory")                                                              \
    XX(OP, 5, 2, "op")                                                                             \
    XX(KERNEL, 6, 2, "kernel")                                                                     \
    XX(STEP_BEGIN, 7, 1, "step_begin")                                                             \
    XX(STEP_END, 8, 1, "step_end")                                                                 \
    XX(EPOCH_BEGIN, 9, 1, "epoch_begin")                                                           \
    XX(EPOCH_END, 10, 1, "epoch_end")                                                              \
    XX(FP_START, 11, 1, "fp_start")                                                                \
    XX(BP_END, 12, 1, "bp_end")                                                                    \
    XX(MEM_ALLOC, 13, 2, "mem_alloc")                                                              \
    XX(MEM_FREE, 14, 1, "mem_free")                                                                \
    XX(COMM, 15, 2, "comm")                                                                        \
    XX(PIPE_OP, 16, 2, "pipeline_op")                                                              \
    XX(QUEUE, 17, 1, "queue")                                                                      \
    XX(DEVICE_QUEUE, 18, 1, "device_queue")                                                        \
    XX(MARK, 19, 1, "mark")                                                                        \
    XX(MARK_START, 20, 1, "mark_start")                                                            \
    XX(MARK_STOP, 21, 1, "mark_stop")                                                              \
    XX(COUNTER, 22, 1, "counter")                                                                  \
    XX(SYS_CPU, 23, 3, "sys_cpu")                                                                  \
    XX(PROC_CPU, 24, 1, "proc_cpu")                                                                \
    XX(THREAD_CPU, 25, 1, "thread_cpu")                                                            \
    XX(PROC_MEM, 26, 1, "proc_mem")                                                                \
    XX(CALL, 27, 2, "call")                                                                        \
    XX(COMM_GROUP, 28, 1, "comm_group")                                                            \
    XX(OP_BRIEF, 29, 1, "op_brief")

typedef enum nnp_rec_kind {
    NNP_REC_NONE = 0,
#define NNP_REC_ENUM_(k, num, slots, text) NNP_REC_##k = (num),
    NNP_REC_KIND_MAP(NNP_REC_ENUM_)
#undef NNP_REC_ENUM_
        NNP_REC_KIND_COUNT
} nnp_rec_kind_t;

/* Name of a kind ("op") or NULL when unknown. */
const char *nnp__rec_kind_name(unsigned kind);
/* Base number of slots of a kind (OP may add one with NNP_REC_F_FLOPS), 0 when unknown:
 * indexed by the kind byte itself, so a reader pays no bound check and no call per record. */
extern const uint8_t nnp__rec_kind_slots_by_byte[UINT8_MAX + 1];
static inline unsigned nnp__rec_kind_slots(unsigned kind)
{
    return kind <= UINT8_MAX ? nnp__rec_kind_slots_by_byte[kind] : 0;
}

/* Field layout per kind (slot 0 uses nnp_rec_t's names):
 *
 * RANGE_BEGIN/RANGE_END/INSTANT: name = event, a = module | stage << 32,
 *     b = custom_info | level << 32.
 * HOST_MEM:     a = bytes.
 * OP:           name = full name, ts = start, a = end, b = correlation id; slot 1 is
 *               nnp_rec_op_ext_t; slot 2 (NNP_REC_F_FLOPS) is nnp_rec_flops_t (FLOPs,
 *               stack).
 * KERNEL:       name = kernel name, ts = start, a = end, b = correlation id; slot 1 is
 *               nnp_rec_kernel_ext_t; slot 2 is nnp_rec_launch_t (NNP_REC_F_LAUNCH) or
 *               nnp_rec_copy_t (NNP_REC_F_COPY), never both.
 * STEP_*:       a = step id, b = graph id.        EPOCH_*: a = epoch id.
 * FP_START/BP_END: a = step id.
 * MEM_ALLOC:    name = tensor name, a = address, b = bytes; slot 1 nnp_rec_alloc_ext_t.
 * MEM_FREE:     a = address, b = bytes (0 = unknown).
 * COMM:         name = op name, ts = start, a = end, b = bytes; slot 1 nnp_rec_comm_ext_t;
 *               slot 2 (NNP_REC_F_COMM_DETAIL) is nnp_rec_comm_detail_t.
 * COMM_GROUP:   name = group name, a = members text id | n_members << 32 (members "" when
 *               over NNP_COMM_GROUP_MAX_RANKS), b = this rank's index in the group (int64,
 *               -1 unknown).
 * PIPE_OP:      name = op type, a = op id, b = parent id (int64, -1 root); slot 1 is
 *               nnp_rec_pipe_ext_t.
 * QUEUE:        a = op id (int64), b = size | capacity << 32.
 * DEVICE_QUEUE: b = size | capacity << 32.
 * MARK:         name = message.  MARK_START: name = message, a = range id.
 * MARK_STOP:    a = range id.
 * COUNTER:      name = counter, a = IEEE-754 double bits of the value.
 * SYS_CPU:      cumulative /proc/stat jiffies: see nnp_rec_sys_cpu_t (3 slots).
 * PROC_CPU:     a = utime ticks, b = stime ticks (clock ticks, sysconf(_SC_CLK_TCK)).
 * THREAD_CPU:   name = thread name, a = utime | stime << 32 (ticks), b = OS tid.
 * PROC_MEM:     a = RSS bytes, b = virtual size bytes.
 * CALL:         name = call name, ts = start, a = end, b = correlation id; slot 1 is
 *               nnp_rec_call_ext_t (calling thread, kind, domain, stream, status).
 * OP_BRIEF:     (v4) an OP in one slot, for the commonest op of a framework (PyTorch
 *               without record_shapes: thousands per step): name = full name = type,
 *               ts = start, a = end, b = the autograd link with NNP_REC_F_SEQ
 *               (sequence_nr | seq_thread << NNP_REC_BRIEF_THREAD_SHIFT), else 0. Every
 *               other field of the OP is 0 (no FLOPs slot). A writer uses it only when that
 *               holds and the link fits; the reader hands it on as the equal 2-slot OP.
 */

/* OP_BRIEF's link word: sequence_nr in the low 48 bits (a training run creates far fewer
 * autograd nodes than 2^48), seq_thread (torch's small thread numbers) in the high 16. */
#define NNP_REC_BRIEF_THREAD_SHIFT 48
#define NNP_REC_BRIEF_SEQ_MAX      ((UINT64_C(1) << NNP_REC_BRIEF_THREAD_SHIFT) - 1)
#define NNP_REC_BRIEF_THREAD_MAX   0xFFFFu

typedef struct nnp_rec_op_ext {
    uint32_t type;
    uint32_t graph_id;
    uint32_t stream_id;
    uint32_t input_shapes;
    uint32_t input_dtypes;
    uint32_t seq_thread; /* with NNP_REC_F_SEQ (nnp_op_t.seq_thread), else 0 */
    int64_t sequence_nr; /* with NNP_REC_F_SEQ, else 0 */
} nnp_rec_op_ext_t;
_Static_assert(sizeof(nnp_rec_op_ext_t) == 32, "extension slot is 32 bytes");

/* The third slot of an OP: its FLOPs (0 = unknown) and source stack (nnp_op_t.stack, 0 =
 * none; writers before the stack left it 0). */
typedef struct nnp_rec_flops {
    uint64_t matrix;
    uint64_t vector;
    uint32_t stack;
    uint32_t reserved32;
    uint64_t reserved;
} nnp_rec_flops_t;
_Static_assert(sizeof(nnp_rec_flops_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_kernel_ext {
    uint32_t type;
    uint32_t device_id;
    uint32_t stream_id;
    uint32_t reserved0;
    uint64_t launch; /* nnp_kernel_t.launch_id: the call that queued it, 0 = unknown */
    uint64_t reserved1;
} nnp_rec_kernel_ext_t;
_Static_assert(sizeof(nnp_rec_kernel_ext_t) == 32, "extension slot is 32 bytes");

/* Block dimensions and registers above 65535 are stored as 65535 (CUDA allows at most
 * 1024 threads per block and 255 registers per thread, so nothing real is clipped). */
typedef struct nnp_rec_launch {
    uint32_t grid[3];
    uint16_t block[3];
    uint16_t registers_per_thread;
    uint32_t static_shared_bytes;
    uint32_t dynamic_shared_bytes;
    uint32_t reserved;
} nnp_rec_launch_t;
_Static_assert(sizeof(nnp_rec_launch_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_copy {
    uint64_t bytes;
    uint8_t copy_kind; /* nnp_copy_kind_t */
    uint8_t src_kind;  /* nnp_memory_kind_t */
    uint8_t dst_kind;  /* nnp_memory_kind_t */
    uint8_t reserved0;
    uint32_t src_device;
    uint32_t dst_device;
    uint32_t value; /* memory set: the value written */
    uint64_t reserved1;
} nnp_rec_copy_t;
_Static_assert(sizeof(nnp_rec_copy_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_call_ext {
    uint64_t tid;       /* OS thread id of the caller (0: the chunk's thread) */
    uint32_t kind;      /* nnp_call_kind_t */
    uint32_t domain;    /* string id (NVTX domain), 0 = none */
    uint32_t stream_id; /* synchronization: the stream waited for */
    int32_t status;     /* return code of the call */
    uint64_t launch;    /* nnp_call_t.launch_id: the id of the device work it queued, 0 = none */
} nnp_rec_call_ext_t;
_Static_assert(sizeof(nnp_rec_call_ext_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_alloc_ext {
    uint32_t owner_op;
    uint32_t device_id;
    uint64_t reserved[3];
} nnp_rec_alloc_ext_t;
_Static_assert(sizeof(nnp_rec_alloc_ext_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_comm_ext {
    uint32_t kind;  /* nnp_comm_kind_t */
    uint32_t group; /* string id */
    int32_t peer;   /* peer or root rank, -1 none */
    uint32_t stream_id;
    uint64_t launch; /* nnp_comm_t.launch_id (a device kernel's launch), 0 = none */
    uint64_t reserved;
} nnp_rec_comm_ext_t;
_Static_assert(sizeof(nnp_rec_comm_ext_t) == 32, "extension slot is 32 bytes");

/* Bits of nnp_rec_comm_detail_t.has. */
#define NNP_REC_COMM_HAS_TAG  0x1u
#define NNP_REC_COMM_HAS_WAIT 0x2u

typedef struct nnp_rec_comm_detail {
    uint64_t count;    /* elements, 0 unknown */
    uint64_t wait_ns;  /* blocked before data moved, when has & NNP_REC_COMM_HAS_WAIT */
    uint32_t datatype; /* string id, 0 unknown */
    int32_t tag;       /* when has & NNP_REC_COMM_HAS_TAG */
    uint32_t has;      /* NNP_REC_COMM_HAS_* */
    uint32_t reserved;
} nnp_rec_comm_detail_t;
_Static_assert(sizeof(nnp_rec_comm_detail_t) == 32, "extension slot is 32 bytes");

typedef struct nnp_rec_pipe_ext {
    uint32_t num_workers;
    uint32_t reserved0;
    uint64_t reserved[3];
} nnp_rec_pipe_ext_t;
_Static_assert(sizeof(nnp_rec_pipe_ext_t) == 32, "extension slot is 32 bytes");

/* SYS_CPU spans 3 slots; viewed as one struct of 96 bytes. */
typedef struct nnp_rec_sys_cpu {
    uint8_t kind, n_slots;
    uint16_t flags;
    uint32_t ncpu; /* online CPUs */
    uint64_t ts;
    uint64_t user, nice, sys, idle, iowait;
    uint64_t irq; /* irq + softirq */
    uint64_t steal;
    uint64_t ctxt;          /* context switches since boot */
    uint64_t procs_running; /* runnable processes now */
    uint64_t procs_blocked; /* processes blocked on I/O now */
} nnp_rec_sys_cpu_t;
_Static_assert(sizeof(nnp_rec_sys_cpu_t) == 96, "SYS_CPU is 3 slots");

#endif /* NNP_RAW_FORMAT_H */
