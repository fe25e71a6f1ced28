/*
 * test-sign.c - base64 (RFC 4648 vectors, both alphabets, refusals), the
 * DSSE pre-authentication encoding (the protocol's example), key pairs
 * (modes, no second make over a key) and envelopes: a round trip, and
 * refusals for a changed payload, a changed signature, another key and
 * envelopes that are no envelopes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

/* base64 of s, as a string the caller frees. */
static char *enc(const char *s)
{
	struct buf b = { NULL, 0, 0 };

	ASSERT_EQ(util_base64_encode(s, strlen(s), &b), 0);
	return buf_steal(&b);
}

/* The bytes s decodes to into out (a string; "" for none), or the error. */
static int dec(const char *s, char *out, size_t size)
{
	struct buf b = { NULL, 0, 0 };
	int rc = util_base64_decode(s, strlen(s), &b);

	snprintf(out, size, "%.*s", (int)b.len, b.data ? b.data : "");
	buf_free(&b);
	return rc;
}

TEST(base64)
{
	static const char *const v[][2] = {
		{ "", "" },         { "f", "Zg==" },         { "fo", "Zm8=" },
		{ "foo", "Zm9v" },  { "foob", "Zm9vYg==" },  { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	char out[64], *s;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		s = enc(v[i][0]);
		ASSERT_STREQ(s, v[i][1]);
		free(s);
		ASSERT_EQ(dec(v[i][1], out, sizeof(out)), 0);
		ASSERT_STREQ(out, v[i][0]);
	}
	/* Unpadded, and the URL alphabet. */
	ASSERT_EQ(dec("Zm9vYg", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "foob");
	ASSERT_EQ(dec("-_-_", out, sizeof(out)), 0);
	ASSERT_EQ(dec("+/+/", out + 8, sizeof(out) - 8), 0);
	ASSERT_STREQ(out, out + 8);
	/* Not base64. */
	ASSERT_EQ(dec("Zm9v!", out, sizeof(out)), -EINVAL);
	ASSERT_EQ(dec("Zm 9v", out, sizeof(out)), -EINVAL);
	ASSERT_EQ(dec("Z", out, sizeof(out)), -EINVAL);
	ASSERT_EQ(dec("Zg=", out, sizeof(out)), -EINVAL);
	ASSERT_EQ(dec("Zh==", out, sizeof(out)), -EINVAL); /* trailing bits set */
	ASSERT_EQ(dec("Zm=9", out, sizeof(out)), -EINVAL);
}

TEST(pae)
{
	struct buf b = { NULL, 0, 0 };

	/* The example of the DSSE protocol. */
	ASSERT_EQ(dsse_pae("http://example.com/HelloWorld", "hello world", 11, &b), 0);
	ASSERT_STREQ(b.data, "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
	buf_free(&b);
}

TEST(envelope)
{
	char dir[] = "/tmp/test-sign.XXXXXX", priv[128], pub[128], priv2[128], pub2[128];
	const char *payload = "{\"_type\":\"x\"}";
	struct buf env = { NULL, 0, 0 }, pem = { NULL, 0, 0 }, pem2 = { NULL, 0, 0 };
	struct buf got = { NULL, 0, 0 };
	char why[256], *type = NULL, *data, keyid[65];
	const char *bad;
	char *p, was;
	struct stat st;
	size_t len;

	ASSERT(mkdtemp(dir) != NULL);
	snprintf(priv, sizeof(priv), "%s/k", dir);
	snprintf(pub, sizeof(pub), "%s/k.pub", dir);
	snprintf(priv2, sizeof(priv2), "%s/k2", dir);
	snprintf(pub2, sizeof(pub2), "%s/k2.pub", dir);
	ASSERT_EQ(sign_key_public(priv, &pem), -ENOENT);
	ASSERT_EQ(sign_key_make(priv, pub), 0);
	ASSERT_EQ(sign_key_make(priv, pub), -EEXIST);
	ASSERT_EQ(sign_key_make(priv2, pub2), 0);
	ASSERT_EQ(stat(priv, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_EQ(stat(pub, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0644);
	ASSERT_EQ(util_read_file(pub, 4096, &data, &len), 0);
	ASSERT_EQ(sign_key_public(priv, &pem), 0);
	ASSERT_STREQ(pem.data, data);
	free(data);
	ASSERT_EQ(util_read_file(pub2, 4096, &data, &len), 0);
	ASSERT_EQ(buf_append(&pem2, data, len), 0);
	free(data);
	ASSERT_EQ(sign_keyid(pem.data, pem.len, keyid), 0);
	ASSERT_EQ(strlen(keyid), 64);
	ASSERT_EQ(sign_keyid("junk", 4, keyid), -EINVAL);

	ASSERT_EQ(dsse_sign(priv, "application/vnd.in-toto+json", payload, strlen(payload), &env), 0);
	ASSERT_EQ(dsse_verify(env.data, env.len, pem.data, pem.len, &type, &got, why, sizeof(why)), 0);
	ASSERT_STREQ(type, "application/vnd.in-toto+json");
	ASSERT_STREQ(got.data, payload);
	free(type);
	type = NULL;
	/* Another key. */
	ASSERT_EQ(dsse_verify(env.data, env.len, pem2.data, pem2.len, &type, &got, why, sizeof(why)),
		  -EBADMSG);
	ASSERT_CONTAINS(why, "no signature verifies");
	/* A changed byte of the signature: its first base64 character. */
	p = strstr(env.data, "\"sig\":");
	ASSERT(p != NULL);
	p = strchr(p + 6, '"') + 1;
	was = *p;
	*p = was == 'A' ? 'B' : 'A';
	ASSERT_EQ(dsse_verify(env.data, env.len, pem.data, pem.len, &type, &got, why, sizeof(why)),
		  -EBADMSG);
	*p = was;
	/* A changed byte of the payload. */
	p = strstr(env.data, "\"payload\":");
	p = strchr(p + 10, '"') + 1;
	was = *p;
	*p = was == 'e' ? 'f' : 'e';
	ASSERT_EQ(dsse_verify(env.data, env.len, pem.data, pem.len, &type, &got, why, sizeof(why)),
		  -EBADMSG);
	*p = was;
	ASSERT_EQ(dsse_verify(env.data, env.len, pem.data, pem.len, &type, &got, why, sizeof(why)), 0);
	free(type);
	/* No envelopes. */
	ASSERT_EQ(dsse_verify("{", 1, pem.data, pem.len, &type, &got, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(dsse_verify("[]", 2, pem.data, pem.len, &type, &got, why, sizeof(why)), -EINVAL);
	bad = "{\"payloadType\":\"t\",\"payload\":\"@@\",\"signatures\":[{\"sig\":\"\"}]}";
	ASSERT_EQ(dsse_verify(bad, strlen(bad), pem.data, pem.len, &type, &got, why, sizeof(why)),
		  -EINVAL);
	ASSERT_CONTAINS(why, "payload is not base64");
	bad = "{\"payloadType\":\"t\",\"payload\":\"\",\"signatures\":[]}";
	ASSERT_EQ(dsse_verify(bad, strlen(bad), pem.data, pem.len, &type, &got, why, sizeof(why)),
		  -EINVAL);
	ASSERT_CONTAINS(why, "signatures");
	ASSERT_EQ(dsse_verify(env.data, env.len, "junk", 4, &type, &got, why, sizeof(why)), -EINVAL);
	ASSERT_CONTAINS(why, "not an ed25519 public key");

	buf_free(&env);
	buf_free(&pem);
	buf_free(&pem2);
	buf_free(&got);
	ASSERT_EQ(test_rmtree(dir), 0);
}

int main(void)
{
	RUN(base64);
	RUN(pae);
	RUN(envelope);
	return 0;
}
