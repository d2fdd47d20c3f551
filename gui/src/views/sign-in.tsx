import { useState } from 'preact/hooks';
import { getJson, token } from '../api/client.js';
import { navigate } from '../router.js';
import type { Caller } from '../store.js';
import { loadSession, useAppState } from '../store.js';
import { ErrorBox } from '../ui/parts.js';

/**
 * Sign in by pasting a user token (from `POST /tokens/user` or `meshctl generate user-token`). It is
 * kept in this tab's session storage and sent in the Authorization header, never in a URL.
 */
export function SignIn() {
  const s = useAppState();
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    const previous = token.get();
    token.set(value.trim());
    try {
      const me = await getJson<Caller>('/_identity', { timeless: true });
      if (me.via !== 'token') throw new Error('the server did not take the token');
      await loadSession();
      setValue('');
      navigate('/');
    } catch (err) {
      if (previous) token.set(previous);
      else token.clear();
      setError(err);
    }
  };
  const signOut = async () => {
    token.clear();
    await loadSession();
  };
  return (
    <>
      <h1 tabIndex={-1}>Sign in</h1>
      <p>
        {s.caller?.via === 'loopback'
          ? 'You call from this machine, so you are an admin already; a token makes you act as its user instead.'
          : s.caller?.via === 'token'
            ? `Signed in as ${s.caller.name}.`
            : 'Without a token you see what anonymous callers may read.'}
      </p>
      <form onSubmit={submit}>
        <label for="token">User token</label>
        <textarea
          id="token"
          class="token"
          rows={4}
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
          required
        />
        <p class="hint">Kept in this browser tab only, until you close it or sign out.</p>
        <div class="buttons">
          <button type="submit" class="primary">
            Sign in
          </button>
          {token.get() && (
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          )}
        </div>
      </form>
      {error !== undefined && <ErrorBox error={error} />}
    </>
  );
}
