/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl: the command line client. Talks only D-Bus (issue 4);
 * for now it knows its verbs and says the daemon API is not there yet. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static void help(void)
{
	printf("Usage: kyber-tunectl [OPTIONS] COMMAND ...\n"
	       "\n"
	       "Control kyber-tuned over D-Bus.\n"
	       "\n"
	       "Commands (need the D-Bus service, not built yet):\n"
	       "  status [DEV]  list  set-goal DEV GOAL...  clear-goal DEV\n"
	       "  pause DEV  resume DEV  reset DEV  monitor [DEV]  hist DEV [read|write]\n"
	       "\n"
	       "  -h, --help   Show this help\n");
}

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	log_set_prefix("kyber-tunectl");
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		if (c == 'h') {
			help();
			return 0;
		}
		return 2;
	}
	if (optind >= argc) {
		log_error("Missing command; see --help");
		return 2;
	}
	log_error("'%s': the kyber-tuned D-Bus service is not available in this build", argv[optind]);
	return 1;
}
