/* nmt_input.h — checking a sentence a user asks labs 03 and 06 to translate (--translate). */
#ifndef AL_NMT_INPUT_H
#define AL_NMT_INPUT_H

#include <stddef.h>

#include "text.h"

/* Tokenize `sentence` as the preset's predict step does (nmt_encode_source) and say what the
 * model will not see as typed. Returns -1 with a message in err when it has no words at all
 * (nothing to translate); else 0, with warn empty, or one line naming the words outside the
 * source vocabulary (read as <unk>) and/or saying that the sentence is longer than num_steps
 * and only its first num_steps tokens are translated. */
int nmt_check_sentence(const NmtData *d, const char *sentence, char *warn, size_t warnlen,
                       char *err, size_t errlen);

/* The labs' --translate: nmt_check_sentence, with "error: lab03: --translate: ..." and exit 2
 * for a sentence without words (call it right after loading the data, before training), and
 * with warn, "warning: lab03: --translate: ..." on stderr (call it just before translating). */
void nmt_translate_flag(const NmtData *d, const char *sentence, int warn);

#endif
