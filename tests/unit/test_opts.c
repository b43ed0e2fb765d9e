/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the option tables (lib/common/rw_opts): argv, config files, help. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "rw_opts.h"
#include "rw_test.h"

struct params {
	uint32_t count;
	uint64_t big;
	char name[8];
	bool fast;
	char config[64];
	int color; /* the app type below */
};

/* An app type: converted by the table's hook, not by the library. */
enum { T_COLOR = RW_OPT_APP };

#define OFF(f) offsetof(struct params, f)
#define SZ(f) sizeof(((struct params *)0)->f)

static const struct rw_opt opts[] = {
    {"count", RW_OPT_U32, OFF(count), 0, "5", 1, 100, "N", "how many"},
    {"big", RW_OPT_U64, OFF(big), 0, "0", 0, UINT64_MAX, "N", "a large one"},
    {"name", RW_OPT_STR, OFF(name), SZ(name), "", 0, 0, "NAME", "at most 7 characters"},
    {"fast", RW_OPT_BOOL, OFF(fast), 0, "false", 0, 0, NULL, "go fast"},
    {"color", T_COLOR, OFF(color), 0, "red", 0, 0, "red|blue", "a color"},
    {"config", RW_OPT_CONFIG, OFF(config), SZ(config), "", 0, 0, "FILE", "read FILE"},
    {"help", RW_OPT_HELP, 0, 0, NULL, 0, 0, NULL, "print this help and exit"},
};

static int
apply_color(const struct rw_opt *o, const char *val, void *obj, const char *ctx, char *err,
	    size_t errlen)
{
	int *c = (int *)((char *)obj + o->off);

	if (strcmp(val, "red") == 0)
		*c = 1;
	else if (strcmp(val, "blue") == 0)
		*c = 2;
	else
		return rw_opts_err(err, errlen, "%s: \"%s\" is not red or blue", ctx, val);
	return 0;
}

static const struct rw_opts table = {
    .opt = opts,
    .n = sizeof(opts) / sizeof(opts[0]),
    .apply = apply_color,
    .usage = "usage: t [options]\n",
    .footer = "end\n",
    .help_width = 12,
    .list_prefix = "--",
    .line_max = 40,
};

static struct params p;
static char err[512];

/* Defaults, then the arguments after a dummy argv[0]. */
static int
parse(int n, const char **args)
{
	const char *argv[16] = {"t"};

	if (n > 0) /* parse(0, NULL): memcpy's source must not be NULL even for 0 bytes */
		memcpy(argv + 1, args, (size_t)n * sizeof(*args));
	memset(&p, 0, sizeof(p));
	rw_opts_defaults(&table, &p);
	err[0] = '\0';
	return rw_opts_parse_args(&table, n + 1, (char **)argv, &p, err, sizeof(err));
}

#define PARSE(...)                                                                                 \
	parse((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),                 \
	      (const char *[]){__VA_ARGS__})

static void
test_defaults(void)
{
	CHECK_EQ(parse(0, NULL), 0);
	CHECK_EQ(p.count, 5);
	CHECK_EQ(p.big, 0);
	CHECK(!p.fast);
	CHECK_EQ(p.color, 1);
	CHECK_EQ(p.config[0], '\0'); /* a config default is never read */
}

static void
test_forms(void)
{
	CHECK_EQ(PARSE("--count=7"), 0);
	CHECK_EQ(p.count, 7);
	CHECK_EQ(PARSE("--count", "8", "--name", "abc"), 0);
	CHECK_EQ(p.count, 8);
	CHECK(strcmp(p.name, "abc") == 0);
	CHECK_EQ(PARSE("--big", "18446744073709551615"), 0);
	CHECK(p.big == UINT64_MAX);
	/* options apply in order: the last one wins */
	CHECK_EQ(PARSE("--count", "8", "--count=9"), 0);
	CHECK_EQ(p.count, 9);
	/* "--name=" is an empty value, not a missing one */
	CHECK_EQ(PARSE("--name="), 0);
	CHECK_EQ(p.name[0], '\0');
	CHECK_EQ(PARSE("--color", "blue"), 0);
	CHECK_EQ(p.color, 2);
}

static void
test_flag(void)
{
	CHECK_EQ(PARSE("--fast"), 0);
	CHECK(p.fast);
	/* a flag never takes the next argument as its value */
	CHECK_EQ(PARSE("--fast", "--count", "3"), 0);
	CHECK(p.fast);
	CHECK_EQ(p.count, 3);
	CHECK_EQ(PARSE("--fast=no"), 0);
	CHECK(!p.fast);
	CHECK_EQ(PARSE("--fast=ON"), 0);
	CHECK(p.fast);
	CHECK_EQ(PARSE("--fast=maybe"), -EINVAL);
	CHECK(strcmp(err, "--fast: \"maybe\" is not a boolean (true/false, yes/no, 1/0)") == 0);
}

static void
test_missing_value(void)
{
	CHECK_EQ(PARSE("--count"), -EINVAL);
	CHECK(strcmp(err, "--count needs a value (N)") == 0);
	CHECK_EQ(PARSE("--fast", "--name"), -EINVAL);
	CHECK(strcmp(err, "--name needs a value (NAME)") == 0);
}

static void
test_unknown(void)
{
	CHECK_EQ(PARSE("--colour=red"), -EINVAL);
	CHECK(strcmp(err, "unknown option \"--colour=red\" (options: --count, --big, --name, "
			  "--fast, --color, --config, --help)") == 0);
	/* a prefix of a name is not that name */
	CHECK_EQ(PARSE("--coun", "3"), -EINVAL);
	CHECK_EQ(PARSE("count"), -EINVAL);
	CHECK(strcmp(err, "unexpected argument \"count\": options start with -- (EAL options go "
			  "before the \"--\" separator)") == 0);
	CHECK_EQ(PARSE("--"), -EINVAL);
	CHECK_EQ(PARSE("--color", "green"), -EINVAL);
	CHECK(strcmp(err, "--color: \"green\" is not red or blue") == 0);
}

static void
test_ranges(void)
{
	CHECK_EQ(PARSE("--count", "0"), -EINVAL);
	CHECK(strcmp(err, "--count: \"0\" is not an integer in 1..100") == 0);
	CHECK_EQ(PARSE("--count", "101"), -EINVAL);
	CHECK_EQ(PARSE("--count", "100"), 0);
	CHECK_EQ(PARSE("--count", "1"), 0);
	/* only decimal digits: no sign, space, or suffix */
	CHECK_EQ(PARSE("--count", "+5"), -EINVAL);
	CHECK_EQ(PARSE("--count", " 5"), -EINVAL);
	CHECK_EQ(PARSE("--count", "5k"), -EINVAL);
	CHECK_EQ(PARSE("--count", ""), -EINVAL);
	CHECK_EQ(PARSE("--count", "-1"), -EINVAL);
	CHECK_EQ(PARSE("--big", "18446744073709551616"), -EINVAL);
	CHECK(strcmp(err, "--big: \"18446744073709551616\" is not an integer in "
			  "0..18446744073709551615") == 0);
	CHECK_EQ(PARSE("--name", "12345678"), -EINVAL);
	CHECK(strcmp(err, "--name: value longer than 7 characters") == 0);
	CHECK_EQ(PARSE("--name", "1234567"), 0);
}

static void
test_help(void)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	rw_opts_help(&table, f);
	fclose(f);
	CHECK(strncmp(out, "usage: t [options]\n", 19) == 0);
	/* a default is shown for options with an argument, not for flags */
	CHECK(strstr(out, "\n  --count N    how many [5]\n") != NULL);
	CHECK(strstr(out, "\n  --fast       go fast\n") != NULL);
	CHECK(strstr(out, "\n  --name NAME  at most 7 characters\n") != NULL);
	CHECK(strstr(out, "\n  --color red|blue a color [red]\n") != NULL);
	CHECK(n >= 4 && strcmp(out + n - 4, "end\n") == 0);
	free(out);
}

/* --help wraps a long text at RW_OPTS_HELP_COLS, continuations under the help column */
static void
test_help_wrap(void)
{
	static const struct rw_opt o[] = {
	    {"long", RW_OPT_U32, OFF(count), 0, "5", 1, 100, "N",
	     "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp "
	     "qqqq rrrr ssss tttt uuuu vvvv wwww"},
	};
	static const struct rw_opts t = {.opt = o, .n = 1, .usage = "", .help_width = 12};
	char *out = NULL, *line, *save = NULL;
	size_t n = 0;
	int lines = 0;
	FILE *f = open_memstream(&out, &n);

	rw_opts_help(&t, f);
	fclose(f);
	/* every word once, in order, none split; the default at the end */
	CHECK(strncmp(out, "  --long N     aaaa bbbb", 24) == 0);
	CHECK(strstr(out, "\n               ") != NULL); /* continuation indented to column 15 */
	CHECK(strstr(out, "wwww [5]\n") != NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		CHECK(strlen(line) <= RW_OPTS_HELP_COLS);
		lines++;
	}
	CHECK_EQ(lines, 2);
	free(out);
}

static void
test_names(void)
{
	char buf[32];

	rw_opts_names(&table, "", buf, sizeof(buf));
	CHECK(strcmp(buf, "count, big, name, fast, color, ") == 0); /* cut to fit */
	rw_opts_json_key(&opts[0], "_ns", buf, sizeof(buf));
	CHECK(strcmp(buf, "count_ns") == 0);
}

/* Writes @text to a temporary file; its path in @path. */
static void
write_file(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/test_opts_XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* Defaults, then the config file holding @text; the message without its path. */
static int
parse_file(const char *text, const char **msg)
{
	static char path[64];
	int rc;

	write_file(path, text);
	memset(&p, 0, sizeof(p));
	rw_opts_defaults(&table, &p);
	err[0] = '\0';
	rc = rw_opts_file(&table, path, &p, err, sizeof(err));
	unlink(path);
	*msg = strncmp(err, path, strlen(path)) == 0 ? err + strlen(path) : err;
	return rc;
}

static void
test_file(void)
{
	const char *msg;

	CHECK_EQ(parse_file("# a comment\n\n  count = 9   # why\nname = \"a b\"\nfast=yes\n"
			    "color = blue",
			    &msg),
		 0);
	CHECK_EQ(p.count, 9);
	CHECK(strcmp(p.name, "a b") == 0);
	CHECK(p.fast);
	CHECK_EQ(p.color, 2);

	CHECK_EQ(parse_file("count = 9\n\nnot a pair\n", &msg), -EINVAL);
	CHECK(strcmp(msg, ":3: \"not a pair\" is not \"key = value\"") == 0);
	CHECK_EQ(parse_file("# x\ncount = 0\n", &msg), -EINVAL);
	CHECK(strcmp(msg, ":2: count: \"0\" is not an integer in 1..100") == 0);
	/* keys are listed without "--"; help is no key */
	CHECK_EQ(parse_file("help = 1\n", &msg), -EINVAL);
	CHECK(strcmp(msg, ":1: unknown key \"help\" (keys: count, big, name, fast, color, config, "
			  "help)") == 0);
	CHECK_EQ(parse_file("config = /dev/null\n", &msg), -EINVAL);
	CHECK(strcmp(msg, ":1: config: a config file cannot include another") == 0);
	/* line_max is 40: 40 characters pass, 41 are refused */
	CHECK_EQ(parse_file("name = \"1234\"                           \n", &msg), 0);
	CHECK_EQ(parse_file("name = \"1234\"                            \n", &msg), -EINVAL);
	CHECK(strcmp(msg, ":1: line longer than 40 characters") == 0);

	CHECK_EQ(rw_opts_file(&table, "/nonexistent/x", &p, err, sizeof(err)), -EINVAL);
	CHECK(strcmp(err, "--config /nonexistent/x: cannot open: No such file or directory") == 0);
}

static void
test_config_option(void)
{
	char path[64];

	write_file(path, "count = 42\n");
	/* the file applies where --config stands: later options override it */
	CHECK_EQ(PARSE("--count", "1", "--config", path, "--name", "x"), 0);
	CHECK_EQ(p.count, 42);
	CHECK(strcmp(p.config, path) == 0);
	CHECK_EQ(PARSE("--config", path, "--count=2"), 0);
	CHECK_EQ(p.count, 2);
	unlink(path);
}

static void
test_main(void)
{
	const char *with[] = {"t", "-l", "0", "--", "--count", "3"};
	const char *without[] = {"t", "-l", "0"};
	int eal_argc;

	memset(&p, 0, sizeof(p));
	rw_opts_defaults(&table, &p);
	CHECK_EQ(rw_opts_parse_main(&table, 6, (char **)with, &p, &eal_argc, err, sizeof(err)), 0);
	CHECK_EQ(eal_argc, 3);
	CHECK_EQ(p.count, 3);
	CHECK_EQ(rw_opts_parse_main(&table, 3, (char **)without, &p, &eal_argc, err, sizeof(err)),
		 0);
	CHECK_EQ(eal_argc, 3);
}

/* perftest's conventions: letters, positional arguments, ignored and refused options. */
static const struct rw_opt pt_opts[] = {
    {"count", RW_OPT_U32, OFF(count), 0, "5", 1, 100, "N", "how many", 'n'},
    {"fast", RW_OPT_BOOL, OFF(fast), 0, "false", 0, 0, NULL, "go fast", 'f'},
    {"name", RW_OPT_STR, OFF(name), SZ(name), "", 0, 0, "NAME", "a name"},
    {"alias", RW_OPT_STR, OFF(name), SZ(name), NULL, 0, 0, "NAME", "alias of --name"},
    {"ib-dev", RW_OPT_IGNORED, 0, 0, NULL, 0, 0, "X", "ignored", 'd'},
    {"events", RW_OPT_IGNORED, 0, 0, NULL, 0, 0, NULL, "ignored"},
    {"rdma_cm", RW_OPT_REFUSED, 0, 0, NULL, 0, 0, NULL, "refused: not here", 'R'},
    {"help", RW_OPT_HELP, 0, 0, NULL, 0, 0, NULL, "help", 'h'},
};

static int
pt_positional(unsigned idx, const char *arg, void *obj, char *msg, size_t msglen)
{
	struct params *q = obj;

	if (idx > 0)
		return rw_opts_err(msg, msglen, "unexpected argument \"%s\"", arg);
	q->color = (int)strlen(arg);
	return 0;
}

static const struct rw_opts pt_table = {
    .opt = pt_opts,
    .n = sizeof(pt_opts) / sizeof(pt_opts[0]),
    .usage = "usage: pt [options] WORD\n",
    .help_width = 14,
    .positional = pt_positional,
    .ctx_prefix = "option ",
    .prog = "pt",
};

static int
pt_parse(int n, const char **args)
{
	const char *argv[16] = {"pt"};

	memcpy(argv + 1, args, (size_t)n * sizeof(*args));
	memset(&p, 0, sizeof(p));
	rw_opts_defaults(&pt_table, &p);
	err[0] = '\0';
	return rw_opts_parse_args(&pt_table, n + 1, (char **)argv, &p, err, sizeof(err));
}

#define PT_PARSE(...)                                                                              \
	pt_parse((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),              \
		 (const char *[]){__VA_ARGS__})

static void
test_letters(void)
{
	CHECK_EQ(PT_PARSE("-n", "7", "word"), 0);
	CHECK_EQ(p.count, 7);
	CHECK_EQ(p.color, 4); /* the positional hook saw "word" */
	CHECK_EQ(PT_PARSE("-n9"), 0);
	CHECK_EQ(p.count, 9);
	CHECK_EQ(PT_PARSE("-f", "-n", "3"), 0);
	CHECK(p.fast);
	CHECK_EQ(p.count, 3);
	/* a letter's error names the long option */
	CHECK_EQ(PT_PARSE("-n", "0"), -EINVAL);
	CHECK(strcmp(err, "option --count: \"0\" is not an integer in 1..100") == 0);
	CHECK_EQ(PT_PARSE("-n"), -EINVAL);
	CHECK(strcmp(err, "option --count needs a value (N)") == 0);
	/* unknown letters and "--" alone are unknown options; "-" is an argument */
	CHECK_EQ(PT_PARSE("-z"), -EINVAL);
	CHECK(strcmp(err, "unknown option \"-z\" (see --help)") == 0);
	CHECK_EQ(PT_PARSE("--"), -EINVAL);
	CHECK(strcmp(err, "unknown option \"--\" (see --help)") == 0);
	CHECK_EQ(PT_PARSE("-"), 0);
	CHECK_EQ(p.color, 1);
	CHECK_EQ(PT_PARSE("a", "b"), -EINVAL);
	CHECK(strcmp(err, "unexpected argument \"b\"") == 0);
	/* an alias writes the same field */
	CHECK_EQ(PT_PARSE("--alias", "x"), 0);
	CHECK(strcmp(p.name, "x") == 0);
	CHECK_EQ(PT_PARSE("-h"), 1);
}

static void
test_ignored_refused(void)
{
	/* ignored ones consume their value (if any) and set nothing */
	CHECK_EQ(PT_PARSE("-d", "mlx5_0", "--events", "-n", "4"), 0);
	CHECK_EQ(p.count, 4);
	CHECK_EQ(p.color, 0);
	CHECK_EQ(PT_PARSE("-dmlx5_0", "w"), 0);
	CHECK_EQ(p.color, 1);
	CHECK_EQ(PT_PARSE("-R"), -ENOTSUP);
	CHECK(strcmp(err, "option --rdma_cm: refused: not here") == 0);
	CHECK_EQ(PT_PARSE("--rdma_cm"), -ENOTSUP);
}

static void
test_help_letters(void)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	rw_opts_help(&pt_table, f);
	fclose(f);
	CHECK(strstr(out, "\n  -n, --count N  how many [5]\n") != NULL);
	CHECK(strstr(out, "\n      --name NAME a name\n") != NULL);
	CHECK(strstr(out, "\n  -R, --rdma_cm  refused: not here\n") != NULL);
	free(out);
}

RW_TEST_MAIN(RW_TEST(test_defaults), RW_TEST(test_forms), RW_TEST(test_flag),
	     RW_TEST(test_missing_value), RW_TEST(test_unknown), RW_TEST(test_ranges),
	     RW_TEST(test_help), RW_TEST(test_help_wrap), RW_TEST(test_names), RW_TEST(test_file),
	     RW_TEST(test_config_option), RW_TEST(test_main), RW_TEST(test_letters),
	     RW_TEST(test_ignored_refused), RW_TEST(test_help_letters))
