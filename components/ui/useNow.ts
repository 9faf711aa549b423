'use client';

import { useEffect, useState } from 'react';

/** useNow re-renders every `everyMs` so relative ages ("12 s ago") stay true; the timer stops on unmount. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(id);
  }, [everyMs]);
  return now;
}
