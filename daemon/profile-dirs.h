/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the profile directories (profile.h) at start. */
#pragma once

#include <stddef.h>

#include "profile.h"

/* Where profiles are read, the first masking the second by file name. */
#define PROFILE_DIR_ETC "/etc/kyber-tuned/profiles.d"
#define PROFILE_DIR_LIB "/usr/lib/kyber-tuned/profiles.d"

/* Appends the records of every NAME.profile in dirs to out; bad files are
 * skipped with a warning. The number of records, or -ENOMEM. */
int profiles_load(const char *const *dirs, size_t n_dirs, struct profiles *out);
