import { Suspense } from 'react';
import { Dashboard } from '@/components/dashboard/Dashboard';

export default function Page() {
  // The dashboard reads its view from the URL's query, which is only known in the browser.
  return (
    <Suspense fallback={null}>
      <Dashboard />
    </Suspense>
  );
}
