/* Test harness shared by selftest.c and oracle.c (see harness.c). */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdio.h>
#include "htpdouble.h"

extern int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

struct api {
    void *lib;
    int (*open)(const char *, remote_handle64 *);
    int (*close)(remote_handle64);
    int (*invoke)(remote_handle64, uint32_t, remote_arg *);
    int (*h64_control)(remote_handle64, uint32_t, void *, uint32_t);
    int (*handle_control)(uint32_t, void *, uint32_t);
    int (*session_control)(uint32_t, void *, uint32_t);
    int (*system_request)(void *);
    void *(*alloc)(int, uint32_t, int);
    void *(*alloc2)(int, uint32_t, size_t);
    void (*free)(void *);
    int (*to_fd)(void *);
    int (*mmap)(int, int, void *, int, size_t, int);
    int (*munmap)(int, int, void *, size_t);
    int (*q_create)(int, uint32_t, uint32_t, uint32_t, dspqueue_callback_t, dspqueue_callback_t, void *, dspqueue_t *);
    int (*q_close)(dspqueue_t);
    int (*q_export)(dspqueue_t, uint64_t *);
    int (*q_write)(dspqueue_t, uint32_t, uint32_t, struct dspqueue_buffer *, uint32_t, const uint8_t *, uint32_t);
    int (*q_read)(dspqueue_t, uint32_t *, uint32_t, uint32_t *, struct dspqueue_buffer *, uint32_t, uint32_t *,
                  uint8_t *, uint32_t);
    int (*q_write_noblock)(dspqueue_t, uint32_t, uint32_t, struct dspqueue_buffer *, uint32_t, const uint8_t *);
    int (*q_read_noblock)(dspqueue_t, uint32_t *, uint32_t, uint32_t *, struct dspqueue_buffer *, uint32_t, uint32_t *,
                          uint8_t *);
    int (*configure)(const char *);
    void (*reset)(void);
    uint64_t (*stat)(const char *);
    size_t (*violations)(char *, size_t);
};

struct session {
    struct api *a;
    remote_handle64 h;
    dspqueue_t q;
    int domain;
    uint8_t *shm; int shm_fd;
    uint8_t *data; int data_fd;
    uint32_t next_id;
};

#define SHM_SIZE (64u << 10)
#define DATA_SIZE (8u << 20)

/* A batch under construction; hx_send_batch copies it into a slot of the session's shared block. */
struct batch {
    struct htp_buf_desc bufs[8]; uint32_t nb;
    struct htp_tensor tens[16]; uint32_t nt;
    struct htp_op_desc ops[8]; uint32_t no;
    int fence; /* serialize the ops as 232-byte fence-protocol descriptors (protocol=fence) */
    uint16_t fence_src[8][HD_FENCE_MAX_INPUTS - HTP_OP_MAX_INPUTS]; /* their src[6..9] (0xffff unless set) */
};

int hx_load(struct api *a, const char *path);
int hx_get_uri(struct api *a, const char *dom, uint32_t session, char *uri, uint32_t len);
/* Bring-up in upstream's order; 0 or the negative number of the failing step. */
int hx_bring_up(struct api *a, struct session *s, const char *dom, int session);
void hx_release(struct session *s);
int hx_invoke_in(struct session *s, uint32_t mid, const void *in, size_t len);
uint16_t hx_add_tensor(struct batch *b, uint16_t bi, uint32_t off, uint32_t type, const uint32_t ne[4], uint32_t ts,
                       uint32_t row_bytes);
struct htp_op_desc *hx_add_op(struct batch *b, uint32_t opcode, uint16_t s0, uint16_t s1, uint16_t d);
int hx_send_batch(struct session *s, const struct batch *b, uint32_t slot, uint32_t id, uint64_t seq);
uint32_t hx_read_rsp(struct session *s, uint32_t *id);
uint16_t hx_fp16(float f);
float hx_fp16_to_f(uint16_t h);
double hx_urand(uint64_t *st);

#endif
