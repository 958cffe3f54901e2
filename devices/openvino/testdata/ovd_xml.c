/* ovdouble: a small XML reader, enough for IR files: elements, attributes with the five predefined entities
 * and character references, text, comments, processing instructions, DOCTYPE and CDATA. */
#include <stdlib.h>
#include <string.h>

#include "ovd.h"

typedef struct {
    const char* s;
    size_t n, i;
    int line;
} xp;

static int at(xp* p, const char* lit) {
    size_t l = strlen(lit);
    return p->i + l <= p->n && memcmp(p->s + p->i, lit, l) == 0;
}

static void adv(xp* p, size_t k) {
    for (size_t j = 0; j < k && p->i < p->n; j++)
        if (p->s[p->i++] == '\n') p->line++;
}

static int skip_to(xp* p, const char* lit) {
    while (p->i < p->n && !at(p, lit)) adv(p, 1);
    if (p->i >= p->n) return -1;
    adv(p, strlen(lit));
    return 0;
}

static void skip_ws(xp* p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        adv(p, 1);
}

static int namech(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == ':' || (unsigned char)c >= 0x80;
}

static char* read_name(xp* p) {
    size_t b = p->i;
    while (p->i < p->n && namech(p->s[p->i])) p->i++;
    if (p->i == b) return NULL;
    return ovd_strndup(p->s + b, p->i - b);
}

/* decodes entities of s[0..n) into a new string; NULL on a malformed reference */
static char* unescape(const char* s, size_t n) {
    char* o = malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            o[k++] = s[i];
            continue;
        }
        const char* semi = memchr(s + i, ';', n - i);
        if (!semi) {
            free(o);
            return NULL;
        }
        size_t el = (size_t)(semi - (s + i)) + 1;
        static const struct {
            const char* e;
            char c;
        } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        int done = 0;
        for (size_t e = 0; e < 5 && !done; e++)
            if (el == strlen(ents[e].e) && memcmp(s + i, ents[e].e, el) == 0) {
                o[k++] = ents[e].c;
                done = 1;
            }
        if (!done && el > 3 && s[i + 1] == '#') {
            char* end;
            unsigned long cp = s[i + 2] == 'x' ? strtoul(s + i + 3, &end, 16) : strtoul(s + i + 2, &end, 10);
            if (end != semi || cp == 0 || cp > 0x10ffff) {
                free(o);
                return NULL;
            }
            if (cp < 0x80)
                o[k++] = (char)cp;
            else if (cp < 0x800) {
                o[k++] = (char)(0xc0 | (cp >> 6));
                o[k++] = (char)(0x80 | (cp & 63));
            } else if (cp < 0x10000) {
                o[k++] = (char)(0xe0 | (cp >> 12));
                o[k++] = (char)(0x80 | ((cp >> 6) & 63));
                o[k++] = (char)(0x80 | (cp & 63));
            } else {
                o[k++] = (char)(0xf0 | (cp >> 18));
                o[k++] = (char)(0x80 | ((cp >> 12) & 63));
                o[k++] = (char)(0x80 | ((cp >> 6) & 63));
                o[k++] = (char)(0x80 | (cp & 63));
            }
            done = 1;
        }
        if (!done) {
            free(o);
            return NULL;
        }
        i += el - 1;
    }
    o[k] = 0;
    return o;
}

static void add_child(ovd_xnode* p, ovd_xnode* c) {
    p->ch = realloc(p->ch, sizeof *p->ch * (size_t)(p->nchild + 1));
    p->ch[p->nchild++] = c;
}

static void append_text(ovd_xnode* e, const char* s, size_t n) {
    size_t old = e->text ? strlen(e->text) : 0;
    e->text = realloc(e->text, old + n + 1);
    memcpy(e->text + old, s, n);
    e->text[old + n] = 0;
}

static int skip_misc(xp* p) {
    for (;;) {
        skip_ws(p);
        if (at(p, "<?")) {
            if (skip_to(p, "?>")) return ovd_err("XML: unterminated processing instruction");
        } else if (at(p, "<!--")) {
            if (skip_to(p, "-->")) return ovd_err("XML: unterminated comment");
        } else if (at(p, "<!DOCTYPE")) {
            if (skip_to(p, ">")) return ovd_err("XML: unterminated DOCTYPE");
        } else
            return 0;
    }
}

static ovd_xnode* parse_elem(xp* p, int depth) {
    if (depth > 64) {
        ovd_err("XML: nesting too deep at line %d", p->line);
        return NULL;
    }
    if (!at(p, "<")) {
        ovd_err("XML: expected '<' at line %d", p->line);
        return NULL;
    }
    adv(p, 1);
    ovd_xnode* e = calloc(1, sizeof *e);
    e->line = p->line;
    e->tag = read_name(p);
    if (!e->tag) {
        ovd_err("XML: bad element name at line %d", p->line);
        goto fail;
    }
    for (;;) {
        skip_ws(p);
        if (p->i >= p->n) {
            ovd_err("XML: unexpected end inside <%s>", e->tag);
            goto fail;
        }
        if (at(p, "/>")) {
            adv(p, 2);
            return e;
        }
        if (at(p, ">")) {
            adv(p, 1);
            break;
        }
        char* an = read_name(p);
        if (!an) {
            ovd_err("XML: bad attribute in <%s> at line %d", e->tag, p->line);
            goto fail;
        }
        skip_ws(p);
        if (!at(p, "=")) {
            ovd_err("XML: attribute %s of <%s> has no value (line %d)", an, e->tag, p->line);
            free(an);
            goto fail;
        }
        adv(p, 1);
        skip_ws(p);
        char q = p->i < p->n ? p->s[p->i] : 0;
        if (q != '"' && q != '\'') {
            free(an);
            ovd_err("XML: unquoted attribute value in <%s> at line %d", e->tag, p->line);
            goto fail;
        }
        adv(p, 1);
        size_t b = p->i;
        while (p->i < p->n && p->s[p->i] != q) adv(p, 1);
        if (p->i >= p->n) {
            free(an);
            ovd_err("XML: unterminated attribute value in <%s>", e->tag);
            goto fail;
        }
        char* av = unescape(p->s + b, p->i - b);
        adv(p, 1);
        if (!av) {
            free(an);
            ovd_err("XML: bad entity in attribute of <%s> at line %d", e->tag, p->line);
            goto fail;
        }
        for (int k = 0; k < e->nattr; k++)
            if (strcmp(e->an[k], an) == 0) {
                ovd_err("XML: duplicate attribute %s in <%s> at line %d", an, e->tag, p->line);
                free(an);
                free(av);
                goto fail;
            }
        e->an = realloc(e->an, sizeof(char*) * (size_t)(e->nattr + 1));
        e->av = realloc(e->av, sizeof(char*) * (size_t)(e->nattr + 1));
        e->an[e->nattr] = an;
        e->av[e->nattr++] = av;
    }
    for (;;) {
        if (p->i >= p->n) {
            ovd_err("XML: element <%s> (line %d) is not closed", e->tag, e->line);
            goto fail;
        }
        if (at(p, "</")) {
            adv(p, 2);
            char* nm = read_name(p);
            int ok = nm && strcmp(nm, e->tag) == 0;
            free(nm);
            skip_ws(p);
            if (!ok || !at(p, ">")) {
                ovd_err("XML: mismatched closing tag for <%s> at line %d", e->tag, p->line);
                goto fail;
            }
            adv(p, 1);
            return e;
        }
        if (at(p, "<!--")) {
            if (skip_to(p, "-->")) {
                ovd_err("XML: unterminated comment");
                goto fail;
            }
            continue;
        }
        if (at(p, "<![CDATA[")) {
            adv(p, 9);
            size_t b = p->i;
            if (skip_to(p, "]]>")) {
                ovd_err("XML: unterminated CDATA");
                goto fail;
            }
            append_text(e, p->s + b, p->i - 3 - b);
            continue;
        }
        if (at(p, "<?")) {
            if (skip_to(p, "?>")) {
                ovd_err("XML: unterminated processing instruction");
                goto fail;
            }
            continue;
        }
        if (at(p, "<")) {
            ovd_xnode* c = parse_elem(p, depth + 1);
            if (!c) goto fail;
            add_child(e, c);
            continue;
        }
        size_t b = p->i;
        while (p->i < p->n && p->s[p->i] != '<') adv(p, 1);
        char* t = unescape(p->s + b, p->i - b);
        if (!t) {
            ovd_err("XML: bad entity in text of <%s>", e->tag);
            goto fail;
        }
        append_text(e, t, strlen(t));
        free(t);
    }
fail:
    ovd_xml_free(e);
    return NULL;
}

ovd_xnode* ovd_xml_parse(const char* s, size_t len) {
    xp p = {s, len, 0, 1};
    if (len >= 3 && (unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb && (unsigned char)s[2] == 0xbf)
        p.i = 3;
    if (memchr(s, 0, len)) {
        /* a NUL inside str_len: the reader would stop there; the caller passed the wrong length */
        size_t z = strlen(s);
        if (z < len) p.n = z;
    }
    if (skip_misc(&p)) return NULL;
    ovd_xnode* root = parse_elem(&p, 0);
    if (!root) return NULL;
    if (skip_misc(&p)) {
        ovd_xml_free(root);
        return NULL;
    }
    if (p.i < p.n) {
        ovd_err("XML: content after the root element at line %d", p.line);
        ovd_xml_free(root);
        return NULL;
    }
    return root;
}

void ovd_xml_free(ovd_xnode* n) {
    if (!n) return;
    for (int i = 0; i < n->nattr; i++) {
        free(n->an[i]);
        free(n->av[i]);
    }
    for (int i = 0; i < n->nchild; i++) ovd_xml_free(n->ch[i]);
    free(n->an);
    free(n->av);
    free(n->ch);
    free(n->tag);
    free(n->text);
    free(n);
}

const char* ovd_xml_attr(const ovd_xnode* n, const char* k) {
    for (int i = 0; i < n->nattr; i++)
        if (strcmp(n->an[i], k) == 0) return n->av[i];
    return NULL;
}

const ovd_xnode* ovd_xml_child(const ovd_xnode* n, const char* tag) {
    for (int i = 0; i < n->nchild; i++)
        if (strcmp(n->ch[i]->tag, tag) == 0) return n->ch[i];
    return NULL;
}
