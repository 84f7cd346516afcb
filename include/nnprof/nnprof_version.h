/* nnprof_version.h - version numbers of the nnprof library.
 * Included by nnprof.h; bumped by hand at each release (see CHANGELOG.md). */
#ifndef NNPROF_VERSION_H
#define NNPROF_VERSION_H

#define NNP_VERSION_MAJOR  0
#define NNP_VERSION_MINOR  1
#define NNP_VERSION_PATCH  0
#define NNP_VERSION_STRING "0.1.0"
/* One integer that compares in release order: 0x00MMmmpp. */
#define NNP_VERSION_NUMBER                                                                         \
    ((NNP_VERSION_MAJOR << 16) | (NNP_VERSION_MINOR << 8) | NNP_VERSION_PATCH)

#endif /* NNPROF_VERSION_H */
