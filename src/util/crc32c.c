/* crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven,
 * slicing-by-1. Protects every raw chunk header and payload; the writer thread and the
 * reader call it, never the hot path. Check value: crc32c("123456789") = 0xE3069283. */
#include <pthread.h>

#include "util.h"

#define CRC32C_POLY 0x82F63B78u

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        table[i] = c;
    }
}

uint32_t nnp__crc32c(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    pthread_once(&table_once, table_init);
    crc = ~crc;
    while (n--)
        crc = table[(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}
