"""ctypes mirrors of the plain-data structs of ``include/nnprof/nnprof.h``.

Every structure lists the C fields in the same order with the same types (enums as
``c_int``, ``bool`` as ``c_bool``, ``size_t`` as ``c_size_t``), so ctypes computes the
same layout as the C compiler. ``tests/test_lib.py`` checks the layout against the
library itself (``nnp_options_to_json`` reads every field of :class:`Options`).
"""

import ctypes
from ctypes import (c_bool, c_char, c_double, c_int, c_int32, c_int64, c_size_t, c_uint,
                    c_uint8, c_uint32, c_uint64)

#: ``NNP_PATH_MAX``: longest path kept in :class:`Options`, terminator included.
PATH_MAX = 4096
#: ``NNP_NAME_MAX``: longest point name kept in :class:`Options`, terminator included.
NAME_MAX = 256

# nnp_log_level_t
LOG_ERROR = 0
LOG_WARN = 1
LOG_INFO = 2
LOG_DEBUG = 3

# nnp_framework_mode_t
FRAMEWORK_ALL = 0
FRAMEWORK_TIME = 1
FRAMEWORK_MEMORY = 2
FRAMEWORK_NONE = 3

# nnp_profiler_level_t
LEVEL_UNSET = 0
LEVEL_0 = 1
LEVEL_1 = 2
LEVEL_2 = 3

# nnp_task_trace_t
TASK_TRACE_ON = 0
TASK_TRACE_OFF = 1
TASK_TRACE_L0 = 2
TASK_TRACE_L1 = 3

# nnp_full_policy_t
FULL_DROP = 0
FULL_BLOCK = 1
FULL_WAIT = 2

# NNP_HOST_SYS_* bits
HOST_SYS_CPU = 0x1
HOST_SYS_MEM = 0x2


class Options(ctypes.Structure):
    """``nnp_options_t``: every option of a session (fill with ``nnp_options_init``)."""

    _fields_ = [
        # MindSpore Profiler options
        ("output_path", c_char * PATH_MAX),
        ("start_profile", c_bool),
        ("op_time", c_bool),
        ("profile_memory", c_bool),
        ("profile_communication", c_bool),
        ("parallel_strategy", c_bool),
        ("data_process", c_bool),
        ("timeline_limit_mb", c_int),
        ("profile_framework", c_int),  # nnp_framework_mode_t
        ("profiler_level", c_int),  # nnp_profiler_level_t
        ("aicore_metrics", c_int),
        ("l2_cache", c_bool),
        ("hbm_ddr", c_bool),
        ("pcie", c_bool),
        ("sync_enable", c_bool),
        ("data_simplification", c_bool),
        ("host_stack", c_bool),
        # msprof PROFILING_OPTIONS
        ("storage_limit_mb", c_uint64),
        ("training_trace", c_bool),
        ("task_trace", c_int),  # nnp_task_trace_t
        ("hccl", c_bool),
        ("aicpu", c_bool),
        ("fp_point", c_char * NAME_MAX),
        ("bp_point", c_char * NAME_MAX),
        ("aic_metrics", c_char * NAME_MAX),
        ("msproftx", c_bool),
        ("runtime_api", c_bool),
        ("host_sys", c_uint),
        ("host_sys_usage", c_uint),
        ("host_sys_usage_freq", c_int),
        # process identity
        ("rank_id", c_int),
        ("device_id", c_int),
        ("rank_size", c_int),
        # recorder settings
        ("buffer_size_kb", c_size_t),
        ("full_policy", c_int),  # nnp_full_policy_t
        ("writer_period_ms", c_int),
        ("sample_interval_ms", c_int),
        ("raw_file_bytes", c_uint64),
        ("storage_limit_bytes", c_uint64),
        # child processes
        ("follow_fork", c_bool),
        ("follow_children", c_bool),
    ]


class Stats(ctypes.Structure):
    """``nnp_stats_t``: counters of a session."""

    _fields_ = [
        ("events_recorded", c_uint64),
        ("events_dropped", c_uint64),
        ("bytes_raw", c_uint64),
        ("bytes_written", c_uint64),
        ("chunks_written", c_uint64),
        ("files_aged_out", c_uint64),
        ("bytes_aged_out", c_uint64),
        ("threads", c_uint32),
        ("events_unwritten", c_uint64),
        ("write_errors", c_uint64),
        ("disk_full", c_bool),
    ]

    def to_dict(self):
        """Returns the counters as a plain ``dict``."""
        return {name: getattr(self, name) for name, _ in self._fields_}


class AnalyseOptions(ctypes.Structure):
    """``nnp_analyse_options_t`` (fill with ``nnp_analyse_options_init``).

    The C field ``async`` is a Python keyword, so it is named ``async_`` here.
    """

    _fields_ = [
        ("pretty", c_bool),
        ("has_steps", c_bool),
        ("step_first", c_uint64),
        ("step_last", c_uint64),
        ("jobs", c_int),
        ("async_", c_bool),
        ("is_developer", c_bool),
        ("quiet", c_bool),
        ("timeline_summary", c_bool),
        ("rank", c_int),
        ("kineto_cuda_sync", c_bool),
        ("graph_id", c_int64),
        ("peak_flops", c_double),
        ("memory_capacity_bytes", c_uint64),
        ("output_dir", ctypes.c_char * PATH_MAX),
    ]


class HostTag(ctypes.Structure):
    """``nnp_host_tag_t``: module, event, stage, custom_info (string ids) and level."""

    _fields_ = [
        ("module", c_uint32),
        ("event", c_uint32),
        ("stage", c_uint32),
        ("custom_info", c_uint32),
        ("level", c_uint8),
    ]


class OpStruct(ctypes.Structure):
    """``nnp_op_t``: a framework operator."""

    _fields_ = [
        ("name", c_uint32),
        ("type", c_uint32),
        ("graph_id", c_uint32),
        ("stream_id", c_uint32),
        ("correlation_id", c_uint64),
        ("input_shapes", c_uint32),
        ("input_dtypes", c_uint32),
        ("flops_matrix", c_uint64),
        ("flops_vector", c_uint64),
        ("sequence_nr", c_int64),
        ("seq_thread", c_uint32),
        ("has_sequence", c_bool),
        ("is_backward", c_bool),
        ("stack", c_uint32),
    ]


class KernelStruct(ctypes.Structure):
    """``nnp_kernel_t``: a device kernel or task."""

    _fields_ = [
        ("name", c_uint32),
        ("type", c_uint32),
        ("device_id", c_uint32),
        ("stream_id", c_uint32),
        ("correlation_id", c_uint64),
        ("launch_id", c_uint64),
    ]


class TensorStruct(ctypes.Structure):
    """``nnp_tensor_t``: one tensor allocation."""

    _fields_ = [
        ("address", c_uint64),
        ("size_bytes", c_uint64),
        ("name", c_uint32),
        ("owner_op", c_uint32),
        ("device_id", c_uint32),
    ]


class CommStruct(ctypes.Structure):
    """``nnp_comm_t``: one communication operation."""

    _fields_ = [
        ("name", c_uint32),
        ("kind", c_int),  # nnp_comm_kind_t
        ("group", c_uint32),
        ("size_bytes", c_uint64),
        ("peer", c_int32),
        ("stream_id", c_uint32),
        # details (raw format 2): recorded only when set
        ("count", c_uint64),
        ("datatype", c_uint32),
        ("tag", c_int32),
        ("has_tag", c_bool),
        ("has_wait", c_bool),
        ("wait_ns", c_uint64),
        ("launch_id", c_uint64),  # a device kernel's launch (nnp_comm_kernel_at)
    ]


class ClockSync(ctypes.Structure):
    """``nnp_clock_sync_t``: how this process's clock relates to a reference rank's."""

    _fields_ = [
        ("method", ctypes.c_char_p),
        ("reference_rank", c_int),
        ("offset_ns", c_int64),
        ("uncertainty_ns", c_int64),
        ("has_drift", c_bool),
        ("drift_ns", c_int64),
        ("note", ctypes.c_char_p),
    ]


class PipelineOpStruct(ctypes.Structure):
    """``nnp_pipeline_op_t``: one data-pipeline operator."""

    _fields_ = [
        ("op_id", c_int64),
        ("op_type", c_uint32),
        ("num_workers", c_uint32),
        ("parent_id", c_int64),
    ]
