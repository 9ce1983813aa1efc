#include "envs/maze/video.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"

#ifdef RINGRL_HAVE_VIDEO
#include <GL/osmesa.h>
#include <gif_lib.h>
#include <mujoco/mujoco.h>
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include "envs/maze/mujoco_env.h"
#endif

namespace ringrl::envs::maze {

namespace fs = std::filesystem;

#ifndef RINGRL_HAVE_VIDEO

bool video_support() noexcept { return false; }

namespace {
[[noreturn]] void no_video() {
  throw UsageError(
      "this build has no video support (it needs MuJoCo, OSMesa, FFmpeg and giflib: scripts/setup.sh installs them)");
}
}  // namespace

struct MazeCamera::Impl {};
MazeCamera::MazeCamera(const Env&, int, int) { no_video(); }
MazeCamera::~MazeCamera() = default;
const RgbImage& MazeCamera::frame(const Env&, const double*) { no_video(); }

struct VideoWriter::Impl {};
VideoWriter::VideoWriter(const std::string&, int, int, int) { no_video(); }
VideoWriter::~VideoWriter() = default;
void VideoWriter::add(const RgbImage&) { no_video(); }
void VideoWriter::close() { no_video(); }
int VideoWriter::frames() const noexcept { return 0; }
int count_video_frames(const std::string&) { no_video(); }

#else

bool video_support() noexcept { return true; }

namespace {

constexpr int kMinSide = 16;
constexpr int kMaxSide = 4096;

void check_size(int width, int height) {
  if (width < kMinSide || width > kMaxSide || height < kMinSide || height > kMaxSide)
    throw UsageError("video size " + std::to_string(width) + "x" + std::to_string(height) + ": expected " +
                     std::to_string(kMinSide) + " to " + std::to_string(kMaxSide) + " pixels a side");
}

std::string extension_of(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace

// ------------------------------------------------------------------------------ MazeCamera

namespace {
constexpr int kMaxSceneGeoms = 4000;
constexpr float kMarkerRgba[4] = {0.95f, 0.1f, 0.1f, 0.8f};
}  // namespace

struct MazeCamera::Impl {
  int width = 0, height = 0;
  OSMesaContext gl = nullptr;
  std::vector<unsigned char> gl_buffer;  // OSMesa's own framebuffer (MuJoCo draws offscreen)
  mjModel* model = nullptr;              // a copy: its offscreen size is set to the frame's
  mjvScene scene;
  mjvCamera camera;
  mjvOption option;
  mjrContext context;
  double marker_size = 0, marker_height = 0;
  RgbImage image;
  std::vector<unsigned char> flipped;

  ~Impl() {
    if (model != nullptr) {
      mjr_freeContext(&context);
      mjv_freeScene(&scene);
      mj_deleteModel(model);
    }
    if (gl != nullptr) OSMesaDestroyContext(gl);
  }
  void make_current() {
    if (!OSMesaMakeCurrent(gl, gl_buffer.data(), GL_UNSIGNED_BYTE, width, height))
      throw std::runtime_error("video: OSMesaMakeCurrent failed");
  }
};

MazeCamera::MazeCamera(const Env& env, int width, int height) : impl_(std::make_unique<Impl>()) {
  check_size(width, height);
  const auto* maze = dynamic_cast<const MujocoMazeEnv*>(&env);
  if (maze == nullptr)
    throw UsageError("video: env " + env.spec().name + " has no MuJoCo physics to render (expected an ant or point maze)");
  Impl& m = *impl_;
  m.width = width;
  m.height = height;
  m.gl = OSMesaCreateContextExt(OSMESA_RGBA, 24, 8, 0, nullptr);
  if (m.gl == nullptr) throw std::runtime_error("video: OSMesa could not create an OpenGL context");
  m.gl_buffer.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4);
  m.make_current();
  m.model = mj_copyModel(nullptr, &maze->model());
  if (m.model == nullptr) throw std::runtime_error("video: mj_copyModel failed");
  m.model->vis.global.offwidth = width;
  m.model->vis.global.offheight = height;
  // The maze models carry no lights of their own: a brighter headlight than MuJoCo's default.
  for (int j = 0; j < 3; ++j) {
    m.model->vis.headlight.ambient[j] = 0.45f;
    m.model->vis.headlight.diffuse[j] = 0.7f;
  }
  mjv_defaultScene(&m.scene);
  mjv_defaultCamera(&m.camera);
  mjv_defaultOption(&m.option);
  mjr_defaultContext(&m.context);
  mjv_makeScene(m.model, &m.scene, kMaxSceneGeoms);
  mjr_makeContext(m.model, &m.context, mjFONTSCALE_100);
  mjr_setBuffer(mjFB_OFFSCREEN, &m.context);
  if (m.context.offWidth < width || m.context.offHeight < height)
    throw std::runtime_error("video: MuJoCo's offscreen buffer is " + std::to_string(m.context.offWidth) + "x" +
                             std::to_string(m.context.offHeight));
  // The whole maze in view: look at its centre from above, tilted toward +y.
  const Layout& L = maze->layout();
  const double s = L.scale();
  const double x0 = L.cell_x(0) - s / 2, x1 = L.cell_x(L.cols() - 1) + s / 2;
  const double y0 = L.cell_y(0) - s / 2, y1 = L.cell_y(L.rows() - 1) + s / 2;
  m.camera.type = mjCAMERA_FREE;
  m.camera.lookat[0] = (x0 + x1) / 2;
  m.camera.lookat[1] = (y0 + y1) / 2;
  m.camera.lookat[2] = 0;
  m.camera.azimuth = 90;
  m.camera.elevation = -65;
  m.camera.distance = 1.25 * std::max(x1 - x0, y1 - y0);
  m.marker_size = 0.2 * s;
  m.marker_height = 1.2 * s;
  m.image.width = width;
  m.image.height = height;
  m.image.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
  m.flipped.resize(m.image.pixels.size());
}

MazeCamera::~MazeCamera() = default;

const RgbImage& MazeCamera::frame(const Env& env, const double* marker) {
  Impl& m = *impl_;
  const auto& maze = dynamic_cast<const MujocoMazeEnv&>(env);
  m.make_current();
  mjv_updateScene(m.model, const_cast<mjData*>(&maze.data()), &m.option, nullptr, &m.camera, mjCAT_ALL, &m.scene);
  if (marker != nullptr && m.scene.ngeom < m.scene.maxgeom) {
    mjvGeom* g = m.scene.geoms + m.scene.ngeom++;
    const mjtNum size[3] = {m.marker_size, m.marker_size, m.marker_size};
    // Above the walls (their tops are at most one cell size high), so no wall hides it.
    const mjtNum pos[3] = {marker[0], marker[1], m.marker_height};
    mjv_initGeom(g, mjGEOM_SPHERE, size, pos, nullptr, kMarkerRgba);
    g->category = mjCAT_DECOR;
  }
  const mjrRect viewport = {0, 0, m.width, m.height};
  mjr_render(viewport, &m.scene, &m.context);
  mjr_readPixels(m.flipped.data(), nullptr, viewport, &m.context);
  // OpenGL's rows run bottom-up; the image's top-down.
  const std::size_t row = static_cast<std::size_t>(m.width) * 3;
  for (int y = 0; y < m.height; ++y)
    std::copy_n(m.flipped.data() + static_cast<std::size_t>(m.height - 1 - y) * row, row,
                m.image.pixels.data() + static_cast<std::size_t>(y) * row);
  return m.image;
}

// ----------------------------------------------------------------------------- VideoWriter

namespace {

constexpr int kGifLevels[3] = {6, 7, 6};  // R, G, B levels of the fixed palette (252 colours)

std::string av_error(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

void av_check(int code, const std::string& what) {
  if (code < 0) throw std::runtime_error("video: " + what + ": " + av_error(code));
}

// MP4 through libavformat/libavcodec.
struct Mp4 {
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVStream* stream = nullptr;
  SwsContext* sws = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  bool header = false;
  std::int64_t pts = 0;

  Mp4(const std::string& tmp, int width, int height, int fps) {
    av_log_set_level(AV_LOG_ERROR);  // the encoders' statistics are not ours to print
    av_check(avformat_alloc_output_context2(&format, nullptr, "mp4", tmp.c_str()), "mp4 muxer");
    const AVCodec* enc = avcodec_find_encoder(AV_CODEC_ID_H264);
    if (enc == nullptr) enc = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (enc == nullptr) throw std::runtime_error("video: FFmpeg has neither an H.264 nor an MPEG-4 encoder");
    stream = avformat_new_stream(format, nullptr);
    codec = avcodec_alloc_context3(enc);
    packet = av_packet_alloc();
    frame = av_frame_alloc();
    if (stream == nullptr || codec == nullptr || packet == nullptr || frame == nullptr)
      throw std::runtime_error("video: out of memory");
    codec->width = width & ~1;
    codec->height = height & ~1;
    codec->time_base = AVRational{1, fps};
    codec->framerate = AVRational{fps, 1};
    codec->pix_fmt = AV_PIX_FMT_YUV420P;
    codec->gop_size = 2 * fps;
    if (enc->id == AV_CODEC_ID_MPEG4) codec->bit_rate = 4'000'000;
    if (format->oformat->flags & AVFMT_GLOBALHEADER) codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (enc->id == AV_CODEC_ID_H264) av_opt_set(codec->priv_data, "preset", "veryfast", 0);
    av_check(avcodec_open2(codec, enc, nullptr), "open the encoder");
    av_check(avcodec_parameters_from_context(stream->codecpar, codec), "stream parameters");
    stream->time_base = codec->time_base;
    av_check(avio_open(&format->pb, tmp.c_str(), AVIO_FLAG_WRITE), "open " + tmp);
    av_check(avformat_write_header(format, nullptr), "write the header");
    header = true;
    frame->format = codec->pix_fmt;
    frame->width = codec->width;
    frame->height = codec->height;
    av_check(av_frame_get_buffer(frame, 0), "frame buffer");
    sws = sws_getContext(codec->width, codec->height, AV_PIX_FMT_RGB24, codec->width, codec->height,
                         AV_PIX_FMT_YUV420P, SWS_BILINEAR, nullptr, nullptr, nullptr);
    if (sws == nullptr) throw std::runtime_error("video: no RGB to YUV converter");
  }
  ~Mp4() {
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&codec);
    if (format != nullptr && format->pb != nullptr) avio_closep(&format->pb);
    avformat_free_context(format);
  }
  void encode(const AVFrame* f) {
    av_check(avcodec_send_frame(codec, f), "encode");
    for (;;) {
      const int r = avcodec_receive_packet(codec, packet);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      av_check(r, "encode");
      av_packet_rescale_ts(packet, codec->time_base, stream->time_base);
      packet->stream_index = stream->index;
      av_check(av_interleaved_write_frame(format, packet), "write a frame");
    }
  }
  void add(const RgbImage& img) {
    av_check(av_frame_make_writable(frame), "frame");
    const std::uint8_t* src[1] = {img.pixels.data()};
    const int stride[1] = {img.width * 3};
    sws_scale(sws, src, stride, 0, codec->height, frame->data, frame->linesize);
    frame->pts = pts++;
    encode(frame);
  }
  void finish() {
    encode(nullptr);
    av_check(av_write_trailer(format), "write the trailer");
    avio_closep(&format->pb);
  }
};

// GIF through giflib, one fixed palette.
struct Gif {
  GifFileType* gif = nullptr;
  int width, height, delay_cs;
  std::vector<GifByteType> line;

  Gif(const std::string& tmp, int w, int h, int fps) : width(w), height(h), delay_cs(std::max(1, 100 / fps)) {
    int error = 0;
    gif = EGifOpenFileName(tmp.c_str(), false, &error);
    if (gif == nullptr) throw std::runtime_error("video: cannot open " + tmp + ": " + GifErrorString(error));
    GifColorType colours[256] = {};
    int n = 0;
    for (int r = 0; r < kGifLevels[0]; ++r)
      for (int g = 0; g < kGifLevels[1]; ++g)
        for (int b = 0; b < kGifLevels[2]; ++b, ++n)
          colours[n] = GifColorType{static_cast<GifByteType>(r * 255 / (kGifLevels[0] - 1)),
                                    static_cast<GifByteType>(g * 255 / (kGifLevels[1] - 1)),
                                    static_cast<GifByteType>(b * 255 / (kGifLevels[2] - 1))};
    ColorMapObject* map = GifMakeMapObject(256, colours);
    EGifSetGifVersion(gif, true);
    const bool ok = EGifPutScreenDesc(gif, width, height, 8, 0, map) == GIF_OK;
    GifFreeMapObject(map);
    if (!ok) fail("screen descriptor");
    // Loop forever (the NETSCAPE2.0 application extension).
    const GifByteType app[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    const GifByteType loop[] = {1, 0, 0};
    if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) != GIF_OK ||
        EGifPutExtensionBlock(gif, sizeof app, app) != GIF_OK || EGifPutExtensionBlock(gif, sizeof loop, loop) != GIF_OK ||
        EGifPutExtensionTrailer(gif) != GIF_OK)
      fail("loop extension");
    line.resize(static_cast<std::size_t>(width));
  }
  ~Gif() {
    if (gif != nullptr) EGifCloseFile(gif, nullptr);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("video: gif " + what + ": " + GifErrorString(gif->Error));
  }
  static int level(unsigned char v, int levels) { return (v * (levels - 1) + 127) / 255; }
  void add(const RgbImage& img) {
    GraphicsControlBlock gcb{DISPOSE_DO_NOT, false, delay_cs, NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) != GIF_OK) fail("frame delay");
    if (EGifPutImageDesc(gif, 0, 0, width, height, false, nullptr) != GIF_OK) fail("image descriptor");
    for (int y = 0; y < height; ++y) {
      const unsigned char* p = img.pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 3;
      for (int x = 0; x < width; ++x, p += 3)
        line[static_cast<std::size_t>(x)] = static_cast<GifByteType>(
            (level(p[0], kGifLevels[0]) * kGifLevels[1] + level(p[1], kGifLevels[1])) * kGifLevels[2] +
            level(p[2], kGifLevels[2]));
      if (EGifPutLine(gif, line.data(), width) != GIF_OK) fail("pixels");
    }
  }
  void finish() {
    int error = 0;
    const int r = EGifCloseFile(gif, &error);
    gif = nullptr;
    if (r != GIF_OK) throw std::runtime_error(std::string("video: gif close: ") + GifErrorString(error));
  }
};

}  // namespace

struct VideoWriter::Impl {
  std::string path, tmp;
  int width = 0, height = 0, frames = 0;
  std::unique_ptr<Mp4> mp4;
  std::unique_ptr<Gif> gif;
  bool closed = false;
};

VideoWriter::VideoWriter(const std::string& path, int width, int height, int fps) : impl_(std::make_unique<Impl>()) {
  check_size(width, height);
  if (fps < 1 || fps > 240) throw UsageError("video frame rate " + std::to_string(fps) + ": expected 1 to 240");
  Impl& m = *impl_;
  m.path = path;
  m.tmp = path + ".tmp";
  m.width = width;
  m.height = height;
  const std::string ext = extension_of(path);
  try {
    if (ext == ".mp4") {
      m.mp4 = std::make_unique<Mp4>(m.tmp, width, height, fps);
    } else if (ext == ".gif") {
      m.gif = std::make_unique<Gif>(m.tmp, width, height, fps);
    } else {
      throw UsageError("video file '" + path + "': expected a name ending in .mp4 or .gif");
    }
  } catch (...) {
    m.mp4.reset();
    m.gif.reset();
    std::error_code ec;
    fs::remove(m.tmp, ec);
    throw;
  }
}

VideoWriter::~VideoWriter() {
  if (!impl_->closed) {
    impl_->mp4.reset();
    impl_->gif.reset();
    std::error_code ec;
    fs::remove(impl_->tmp, ec);
  }
}

void VideoWriter::add(const RgbImage& frame) {
  Impl& m = *impl_;
  if (m.closed) throw std::logic_error("video: add() after close()");
  if (frame.width != m.width || frame.height != m.height)
    throw std::invalid_argument("video: a frame of another size");
  if (m.mp4) m.mp4->add(frame);
  if (m.gif) m.gif->add(frame);
  ++m.frames;
}

void VideoWriter::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  if (m.mp4) m.mp4->finish();
  if (m.gif) m.gif->finish();
  m.mp4.reset();
  m.gif.reset();
  // giflib creates its file 0600; a video is as readable as any other output.
  fs::permissions(m.tmp, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  fs::rename(m.tmp, m.path);
  m.closed = true;
}

int VideoWriter::frames() const noexcept { return impl_->frames; }

int count_video_frames(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == ".gif") {
    int error = 0;
    GifFileType* gif = DGifOpenFileName(path.c_str(), &error);
    if (gif == nullptr) throw std::runtime_error("video: cannot read " + path + ": " + GifErrorString(error));
    const bool ok = DGifSlurp(gif) == GIF_OK;
    const int n = gif->ImageCount;
    DGifCloseFile(gif, &error);
    if (!ok) throw std::runtime_error("video: " + path + " is not a readable GIF");
    return n;
  }
  AVFormatContext* format = nullptr;
  av_check(avformat_open_input(&format, path.c_str(), nullptr, nullptr), "open " + path);
  int n = 0;
  try {
    av_check(avformat_find_stream_info(format, nullptr), "read " + path);
    const int video = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    av_check(video, "no video stream in " + path);
    AVPacket* packet = av_packet_alloc();
    while (av_read_frame(format, packet) >= 0) {
      if (packet->stream_index == video) ++n;
      av_packet_unref(packet);
    }
    av_packet_free(&packet);
  } catch (...) {
    avformat_close_input(&format);
    throw;
  }
  avformat_close_input(&format);
  return n;
}

#endif

}  // namespace ringrl::envs::maze
