"""The services take what they built at start out of the garbage
collector's view (service.freeze_heap): the RPC services once they run,
each API worker once its app is built."""
import gc

from gunicorn import config as gunicorn_config
import testtools

from nova_moves import service
from nova_moves.wsgi import server


class FreezeHeapTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        gc.unfreeze()
        self.addCleanup(gc.unfreeze)

    def test_what_is_alive_leaves_the_collections(self):
        self.assertEqual(0, gc.get_freeze_count())
        survivor = [object() for _ in range(100)]
        service.freeze_heap()
        # Every object alive here (the survivors, this test, the modules)
        # is now frozen, none of it left in the three generations.
        self.assertGreater(gc.get_freeze_count(), len(survivor))
        self.assertNotIn(id(survivor), {id(o) for o in gc.get_objects()})

    def test_each_api_worker_freezes_once_its_app_is_built(self):
        cfg = gunicorn_config.Config()
        # gunicorn checks the hook's signature when it is set.
        cfg.set('post_worker_init',
                server.server_options()['post_worker_init'])
        self.assertEqual(0, gc.get_freeze_count())
        cfg.post_worker_init(object())
        self.assertGreater(gc.get_freeze_count(), 0)
