import { getHistoryState } from '@/server/history/api';
import { route } from '@/server/route';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = route(getHistoryState);
