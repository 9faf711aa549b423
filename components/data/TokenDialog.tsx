'use client';

import { useEffect, useId, useRef, useState, useSyncExternalStore, type FormEvent } from 'react';
import { accessState, provideToken, subscribeAccess } from './access';
import styles from './TokenDialog.module.css';

const SERVER_STATE = { needed: false, rejected: false, generation: 0 };

/**
 * TokenDialog asks for the server's access token after a 401: a modal
 * <dialog> (focus stays inside, Escape is refused since nothing works
 * without the token) with one labelled password field.
 */
export function TokenDialog() {
  const access = useSyncExternalStore(subscribeAccess, accessState, () => SERVER_STATE);
  const ref = useRef<HTMLDialogElement>(null);
  const [value, setValue] = useState('');
  const id = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (access.needed && !dialog.open) dialog.showModal();
    if (!access.needed && dialog.open) dialog.close();
  }, [access.needed]);

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const token = value.trim();
    if (!token) return;
    setValue('');
    provideToken(token);
  };

  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-why`}
      onCancel={(e) => e.preventDefault()}
    >
      <form onSubmit={onSubmit} className={styles.form}>
        <h2 id={`${id}-title`} className={styles.title}>
          Access token
        </h2>
        <p id={`${id}-why`} className={styles.why}>
          This refwatch server shows data only with its token (set by <code>REFWATCH_TOKEN</code> or{' '}
          <code>--token</code>). It is kept in this tab until you close it.
        </p>
        {access.rejected ? (
          <p className={styles.error} role="alert">
            That token was not accepted. Check the value the server was started with.
          </p>
        ) : null}
        <label htmlFor={`${id}-token`} className={styles.label}>
          Token
        </label>
        <input
          id={`${id}-token`}
          className={styles.input}
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          minLength={16}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          autoFocus
        />
        <div className={styles.actions}>
          <button type="submit" className={styles.primary}>
            Continue
          </button>
        </div>
      </form>
    </dialog>
  );
}
