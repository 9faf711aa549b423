import { getHealthz } from '@/server/api';
import { handle } from '@/server/http/errors';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = handle(() => getHealthz());
